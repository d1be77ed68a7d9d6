// graph.rs — Graph on the CPU plugin: a captured exp(x) * x gives the eager result at every
// launch (also after new input data and after fusion), reading a tensor while capturing is
// refused, a closure's error or panic ends the capture, and an AdamW node's attributes can
// be replaced between launches.
use std::panic::{catch_unwind, AssertUnwindSafe};

use catalyst::{ops, sys, Error, Graph, GraphStage, Runtime, StatusCode, Tensor};

fn exp_times(x: &Tensor) -> catalyst::Result<Tensor> {
    ops::mul(&ops::exp(x)?, x)
}

/// The thread is not capturing: the call only valid inside a capture is refused.
fn assert_not_capturing(rt: &Runtime) {
    let error = rt.capture_next_node().expect_err("still capturing");
    assert_eq!(error.code(), StatusCode::FailedPrecondition, "{}", error);
}

#[test]
fn captured_exp_times_x_equals_eager() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let first = [0.5f32, -1.25, 2.0, 0.0, -3.5, 1.0e-3];
    let x = Tensor::from_slice(cpu, &[2, 3], &first).unwrap();

    let (graph, y) = Graph::capture(&rt, || {
        assert_eq!(rt.capture_next_node()?, 0);
        exp_times(&x)
    })
    .unwrap();
    assert_not_capturing(&rt);
    let stats = graph.stats().unwrap();
    assert_eq!((stats.captured_nodes, stats.nodes, stats.runs), (2, 2, 0), "{:?}", stats);
    assert_eq!(y.shape().unwrap(), vec![2, 3]);

    graph.optimize(Some("fuse_elementwise")).unwrap();
    let passes = graph.pass_report().unwrap();
    assert_eq!(passes.len(), 1, "{:?}", passes);
    assert_eq!(passes[0].name, "fuse_elementwise");
    assert_eq!((passes[0].nodes_before, passes[0].nodes_after), (2, 1), "{:?}", passes);
    // A second optimisation is refused.
    assert_eq!(graph.optimize(None).unwrap_err().code(), StatusCode::FailedPrecondition);

    graph.launch().unwrap();
    let eager = exp_times(&x).unwrap().to_vec::<f32>().unwrap();
    // Fused equals the separate ops bit for bit (catalyst.h, "The fused elementwise op").
    assert_eq!(y.to_vec::<f32>().unwrap(), eager);
    assert_ne!(eager, vec![0.0f32; 6]);

    // New data in the captured input, launched again.
    let second: Vec<f32> = first.iter().map(|v| v * -0.75 + 0.25).collect();
    ops::copy_(&x, &Tensor::from_slice(cpu, &[2, 3], &second).unwrap()).unwrap();
    graph.launch().unwrap();
    let eager2 = exp_times(&x).unwrap().to_vec::<f32>().unwrap();
    assert_ne!(eager2, eager);
    assert_eq!(y.to_vec::<f32>().unwrap(), eager2);

    let stats = graph.stats().unwrap();
    assert_eq!((stats.captured_nodes, stats.nodes, stats.runs), (2, 1, 2), "{:?}", stats);

    let dot = std::env::temp_dir().join(format!("catalyst_rust_graph_{}.dot", std::process::id()));
    graph.write_dot(GraphStage::Current, &dot).unwrap();
    let text = std::fs::read_to_string(&dot).unwrap();
    std::fs::remove_file(&dot).unwrap();
    assert!(text.contains("digraph"), "{}", text);
}

#[test]
fn reading_a_tensor_while_capturing_fails() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let x = Tensor::from_slice(cpu, &[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let (graph, read) = Graph::capture(&rt, || Ok::<_, Error>(x.to_vec::<f32>())).unwrap();
    let error = read.expect_err("a read during capture returned data");
    assert_eq!(error.code(), StatusCode::FailedPrecondition, "{}", error);
    assert_eq!(graph.stats().unwrap().captured_nodes, 0);
    // After the capture the same read works.
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn an_error_or_a_panic_in_the_closure_ends_the_capture() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let x = Tensor::from_slice(cpu, &[2], &[1.0f32, -1.0]).unwrap();

    let failed = Graph::capture(&rt, || -> catalyst::Result<Tensor> {
        exp_times(&x)?;
        Err(Error::new(StatusCode::InvalidArgument, "the closure's own error"))
    });
    let error = failed.expect_err("the closure's error was lost");
    assert_eq!(error.message(), "the closure's own error");
    assert_not_capturing(&rt);
    assert_eq!(exp_times(&x).unwrap().to_vec::<f32>().unwrap().len(), 2); // eager again

    let panicked = catch_unwind(AssertUnwindSafe(|| {
        Graph::capture(&rt, || -> catalyst::Result<()> {
            exp_times(&x)?;
            panic!("inside the capture")
        })
    }));
    assert!(panicked.is_err());
    assert_not_capturing(&rt);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, -1.0]);
    // A fresh capture can begin: the abandoned ones left nothing behind.
    let (graph, _) = Graph::capture(&rt, || exp_times(&x)).unwrap();
    assert_eq!(graph.stats().unwrap().captured_nodes, 2);
}

fn adamw(lr: f64, step: u64) -> sys::ctl_adamw_attrs {
    let mut attrs = sys::ctl_adamw_attrs::new();
    attrs.lr = lr;
    attrs.beta1 = 0.9;
    attrs.beta2 = 0.999;
    attrs.eps = 1e-8;
    attrs.weight_decay = 0.01;
    attrs.step = step;
    attrs
}

#[test]
fn set_node_attrs_updates_an_adamw_node() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let state = |values: &[f32]| Tensor::from_slice(cpu, &[4], values).unwrap();
    let grad = [0.5f32, -0.25, 1.0, -2.0];
    let start = [1.0f32, 2.0, -1.0, 0.5];
    let (g, p, m, v) = (state(&grad), state(&start), state(&[0.0; 4]), state(&[0.0; 4]));
    let (ge, pe, me, ve) = (state(&grad), state(&start), state(&[0.0; 4]), state(&[0.0; 4]));

    let (graph, node) = Graph::capture(&rt, || {
        let node = rt.capture_next_node()?;
        ops::adamw_step(&g, &p, &m, &v, &adamw(0.1, 1))?;
        Ok::<_, Error>(node)
    })
    .unwrap();
    graph.launch().unwrap();
    ops::adamw_step(&ge, &pe, &me, &ve, &adamw(0.1, 1)).unwrap();
    assert_eq!(p.to_vec::<f32>().unwrap(), pe.to_vec::<f32>().unwrap());

    // A bad step count is refused.
    let error = graph.set_node_attrs(node, &adamw(0.05, 0)).unwrap_err();
    assert_eq!(error.code(), StatusCode::InvalidArgument, "{}", error);
    graph.set_node_attrs(node, &adamw(0.05, 2)).unwrap();
    graph.launch().unwrap();
    ops::adamw_step(&ge, &pe, &me, &ve, &adamw(0.05, 2)).unwrap();
    let after = p.to_vec::<f32>().unwrap();
    assert_eq!(after, pe.to_vec::<f32>().unwrap());
    assert_eq!(m.to_vec::<f32>().unwrap(), me.to_vec::<f32>().unwrap());
    assert_eq!(v.to_vec::<f32>().unwrap(), ve.to_vec::<f32>().unwrap());
    // The same graph launched with its captured attrs would have given another value.
    let (gs, ps, ms, vs) = (state(&grad), state(&start), state(&[0.0; 4]), state(&[0.0; 4]));
    ops::adamw_step(&gs, &ps, &ms, &vs, &adamw(0.1, 1)).unwrap();
    ops::adamw_step(&gs, &ps, &ms, &vs, &adamw(0.1, 1)).unwrap();
    assert_ne!(after, ps.to_vec::<f32>().unwrap());
}
