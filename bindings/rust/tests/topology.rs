// topology.rs — a device's locality and the topology description through the safe API.
use catalyst::{Device, Runtime, StatusCode};

#[test]
fn cpu_device_has_a_locality_with_reasons() {
    let rt = Runtime::new().unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let locality = cpu.locality().unwrap();
    assert!(!locality.reason.is_empty(), "{:?}", locality);
    assert!(!locality.topology_source.is_empty(), "{:?}", locality);
    if locality.known {
        assert!(locality.package.is_some() || locality.numa_node.is_some(), "{:?}", locality);
    }
    // SAFETY: NULL is checked by the library.
    let null = unsafe { Device::from_raw(std::ptr::null_mut()) };
    let error = null.locality().unwrap_err();
    assert_eq!(error.code(), StatusCode::InvalidArgument);
    assert!(error.message().contains("NULL"), "{}", error);
}

#[test]
fn topology_description_in_both_formats() {
    let rt = Runtime::new().unwrap();
    let name = rt.find_device("cpu").unwrap().info().unwrap().name;
    let text = rt.describe_topology(false).unwrap();
    let json = rt.describe_topology(true).unwrap();
    assert!(!text.contains('\0') && !json.contains('\0'));
    assert!(json.trim_start().starts_with('{') && json.trim_end().ends_with('}'), "{}", json);
    assert!(text.contains(&name) || text.contains("cpu:0"), "{}", text);
    assert!(json.contains("cpu:0"), "{}", json);
    // Every byte the library reports is there, and nothing else.
    for (format, described) in
        [(catalyst::sys::CTL_TOPOLOGY_FORMAT_TEXT, &text), (catalyst::sys::CTL_TOPOLOGY_FORMAT_JSON, &json)]
    {
        let mut length = 0usize;
        // SAFETY: capacity 0 with a NULL buffer asks for the length only.
        let status = unsafe {
            catalyst::sys::ctl_runtime_topology_describe(rt.as_raw(), format, std::ptr::null_mut(), 0, &mut length)
        };
        assert!(status.is_null());
        assert_eq!(described.len(), length);
    }
}
