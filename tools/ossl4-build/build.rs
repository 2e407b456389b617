//! openssl-src's own builder, so OpenSSL 4.0 gets exactly the flags the vendored 3.5 gets.
fn main() {
    println!("cargo:rerun-if-env-changed=OSSL4_OUT");
    let Ok(prefix) = std::env::var("OSSL4_OUT") else {
        panic!("set OSSL4_OUT to an absolute folder (tools/openssl4.sh does)");
    };
    let artifacts = openssl_src::Build::new().out_dir(&prefix).openssl_dir("/usr/local/ssl").build();
    println!("cargo:warning=OpenSSL {} installed: lib={}", openssl_src::version(), artifacts.lib_dir().display());
}
