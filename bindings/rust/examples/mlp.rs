// mlp.rs — the tiny MLP of examples/mlp/README.md, trained with autograd and the fused
// AdamW op on the default device: the same op calls in the same order as every other
// language's version, printing `step <t> loss <value>` with C's %.9g.
//
//   cargo run --offline --example mlp
use catalyst::{ops, sys, DType, Runtime, Tensor};

const SAMPLES: usize = 64;
const FEATURES: usize = 4;
const HIDDEN: usize = 16;
const CLASSES: usize = 3;
const STEPS: u64 = 50;

/// C's printf("%.*g", precision, value) for finite and non-finite doubles.
fn format_g(value: f64, precision: usize) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() { "-nan".to_string() } else { "nan".to_string() };
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf".to_string() } else { "inf".to_string() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0".to_string() } else { "0".to_string() };
    }
    // %g picks the style from the exponent the value has once rounded to `precision` digits.
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} always writes an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} writes a decimal exponent");
    let strip = |text: &str| -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text.to_string()
        }
    };
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mantissa), sign, exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent) as usize;
        strip(&format!("{:.*}", decimals, value))
    }
}

fn main() -> catalyst::Result<()> {
    let runtime = Runtime::new()?;
    let device = runtime.default_device()?;

    let mut x_values = vec![0f32; SAMPLES * FEATURES];
    let mut y_values = vec![0i32; SAMPLES];
    for i in 0..SAMPLES {
        for j in 0..FEATURES {
            let k = (7 * i + 3 * j) % 13;
            x_values[i * FEATURES + j] = (k as f64 / 6.5 - 1.0) as f32;
        }
        y_values[i] = (((7 * i) % 13 + (7 * i + 9) % 13) % 3) as i32;
    }
    let x = Tensor::from_slice(device, &[SAMPLES as i64, FEATURES as i64], &x_values)?;
    let y = Tensor::from_slice(device, &[SAMPLES as i64], &y_values)?;

    let w1_values: Vec<f32> =
        (0..FEATURES * HIDDEN).map(|n| (((37 * n) % 101) as f64 / 101.0 * 0.8 - 0.4) as f32).collect();
    let w2_values: Vec<f32> =
        (0..HIDDEN * CLASSES).map(|n| (((53 * n) % 97) as f64 / 97.0 * 0.8 - 0.4) as f32).collect();
    let w1 = Tensor::from_slice(device, &[FEATURES as i64, HIDDEN as i64], &w1_values)?;
    let b1 = Tensor::zeros(device, DType::F32, &[HIDDEN as i64])?;
    let w2 = Tensor::from_slice(device, &[HIDDEN as i64, CLASSES as i64], &w2_values)?;
    let b2 = Tensor::zeros(device, DType::F32, &[CLASSES as i64])?;
    let params = [&w1, &b1, &w2, &b2];
    let mut moments = Vec::new();
    for p in params.iter() {
        p.set_requires_grad(true)?;
        let shape = p.shape()?;
        moments.push((Tensor::zeros(device, DType::F32, &shape)?, Tensor::zeros(device, DType::F32, &shape)?));
    }

    let mut loss_attrs = sys::ctl_cross_entropy_attrs::new();
    loss_attrs.reduction = sys::CTL_REDUCTION_MEAN;
    for step in 1..=STEPS {
        let h = ops::relu(&ops::add(&ops::matmul(&x, &w1)?, &b1)?)?;
        let logits = ops::add(&ops::matmul(&h, &w2)?, &b2)?;
        let loss = ops::cross_entropy(&logits, &y, &loss_attrs)?;
        let loss_value = loss.to_vec::<f32>()?[0];
        loss.backward()?;
        let mut adamw = sys::ctl_adamw_attrs::new();
        adamw.lr = 0.01;
        adamw.beta1 = 0.9;
        adamw.beta2 = 0.999;
        adamw.eps = 1e-8;
        adamw.weight_decay = 0.01;
        adamw.step = step;
        for (p, (exp_avg, exp_avg_sq)) in params.iter().zip(moments.iter()) {
            let grad = p.grad()?.expect("backward reaches every parameter");
            ops::adamw_step(&grad, p, exp_avg, exp_avg_sq, &adamw)?;
        }
        for p in params.iter() {
            p.zero_grad()?;
        }
        println!("step {} loss {}", step, format_g(f64::from(loss_value), 9));
    }
    Ok(())
}
