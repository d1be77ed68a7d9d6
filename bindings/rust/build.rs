// build.rs — finds libcatalyst for linking. CATALYST_LIB_DIR (the folder holding
// libcatalyst.so, e.g. a CMake build tree's lib/) wins; else pkg-config's catalyst.pc, the
// file `cmake --install` puts in <prefix>/lib/pkgconfig. Either way the folder is also put
// in the binaries' run path, so tests and examples find the library without LD_LIBRARY_PATH.
use std::env;
use std::process::Command;

fn pkg_config_libdir() -> Result<String, String> {
    let output = Command::new("pkg-config")
        .args(["--print-errors", "--variable=libdir", "catalyst"])
        .output()
        .map_err(|e| format!("could not run pkg-config: {}", e))?;
    if !output.status.success() {
        return Err(format!("pkg-config: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if libdir.is_empty() {
        return Err("pkg-config's catalyst.pc has no libdir".to_string());
    }
    Ok(libdir)
}

fn main() {
    println!("cargo:rerun-if-env-changed=CATALYST_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    let libdir = match env::var("CATALYST_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => dir,
        _ => match pkg_config_libdir() {
            Ok(dir) => dir,
            Err(reason) => {
                eprintln!(
                    "catalyst: cannot find libcatalyst ({}). Set CATALYST_LIB_DIR to the folder \
                     holding libcatalyst.so (a build tree's lib/), or PKG_CONFIG_PATH to the folder \
                     holding catalyst.pc (<prefix>/lib/pkgconfig).",
                    reason
                );
                std::process::exit(1);
            }
        },
    };
    println!("cargo:rustc-link-search=native={}", libdir);
    println!("cargo:rustc-link-lib=dylib=catalyst");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", libdir);
    // The tests read it to find the headers and plugins next to the library.
    println!("cargo:rustc-env=CATALYST_LINKED_LIB_DIR={}", libdir);
}
