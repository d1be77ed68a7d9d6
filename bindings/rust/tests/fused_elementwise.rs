// fused_elementwise.rs — ABI 1.5's fused elementwise op through the generic op call: the
// program exp(r0) * r0 equals the separate ops bit for bit (catalyst.h promises it), and a
// program that reads a register not yet written is refused.
use catalyst::{ops, sys, OpId, Runtime, StatusCode, Tensor};

fn instruction(op: OpId, a: u16, b: u16) -> sys::ctl_fused_instruction {
    sys::ctl_fused_instruction { op: op.0, a, b }
}

#[test]
fn exp_times_x_program_equals_the_separate_ops() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let x = Tensor::from_slice(cpu, &[5], &[0.5f32, -1.25, 2.0, 0.0, -3.5]).unwrap();
    assert_eq!(OpId::FUSED_ELEMENTWISE.name().as_deref(), Some("fused_elementwise"));

    let mut attrs = sys::ctl_fused_elementwise_attrs::new();
    attrs.instruction_count = 2;
    attrs.program[0] = instruction(OpId::EXP, 0, 0); // r1 = exp(r0)
    attrs.program[1] = instruction(OpId::MUL, 1, 0); // r2 = r1 * r0
    let fused = ops::op_run(OpId::FUSED_ELEMENTWISE, &[Some(&x)], Some(&attrs), 1).unwrap().remove(0);
    let eager = ops::mul(&ops::exp(&x).unwrap(), &x).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(fused.to_vec::<f32>().unwrap(), eager);

    attrs.program[1] = instruction(OpId::MUL, 1, 3); // register 3 is never written
    let error = ops::op_run(OpId::FUSED_ELEMENTWISE, &[Some(&x)], Some(&attrs), 1).unwrap_err();
    assert_eq!(error.code(), StatusCode::InvalidArgument, "{}", error);
}
