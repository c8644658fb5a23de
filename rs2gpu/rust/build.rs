//! Puts the driver loader where the runtime includes it from, `$OUT_DIR/rs2gpu_driver.rs`, as rs2gpu's
//! Cargo hook does: the runtime is compiled here exactly as it is shipped.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=src/rs2gpu_driver.rs");
    let out_dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for a build script");
    std::fs::copy("src/rs2gpu_driver.rs", Path::new(&out_dir).join("rs2gpu_driver.rs"))
        .expect("copy src/rs2gpu_driver.rs into OUT_DIR");
}
