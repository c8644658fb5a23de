//! The `#[kernel]` attribute of rs2gpu.
//!
//! rs2gpu reads the Rust source of a `#[kernel]` function itself and translates it to CUDA/HIP C++. For rustc
//! the attribute is only a marker: it hands the function back unchanged, so the same source compiles on the
//! CPU and its results are the reference the GPU must reproduce. The crate uses bare `proc_macro` and has no
//! dependencies, so it builds offline.

use proc_macro::{TokenStream, TokenTree};

/// The one argument the attribute accepts: it lets the GPU build contract `a * b + c` into fused multiply-adds.
const FAST_MATH: &str = "fast_math";

/// Marks a function as a GPU kernel; `#[kernel(fast_math)]` also opts in to fast math on the GPU.
///
/// The function is returned unchanged: its CPU behaviour is the specification. Any argument other than
/// `fast_math` is a compile error here, so a typo cannot silently change what the GPU computes.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match check_args(attr) {
        Ok(()) => item,
        Err(message) => {
            // Keep the function alongside the error, so that callers don't get extra "not found" errors.
            let mut out = compile_error(&message);
            out.extend(item);
            out
        }
    }
}

/// Accepts no arguments or exactly `fast_math`; otherwise returns a message naming the bad argument.
fn check_args(attr: TokenStream) -> Result<(), String> {
    let mut args: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for token in attr {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => args.push(Vec::new()),
            _ => args.last_mut().unwrap().push(token),
        }
    }
    let args: Vec<String> = args
        .iter()
        .filter(|tokens| !tokens.is_empty())
        .map(|tokens| tokens.iter().cloned().collect::<TokenStream>().to_string())
        .collect();
    if let Some(bad) = args.iter().find(|arg| arg.as_str() != FAST_MATH) {
        return Err(format!(
            "unknown #[kernel] argument `{bad}`: the only accepted argument is `{FAST_MATH}`"
        ));
    }
    if args.len() > 1 {
        return Err(format!("#[kernel] argument `{FAST_MATH}` is given more than once"));
    }
    Ok(())
}

/// `compile_error!("message");` as tokens; `{:?}` quotes and escapes the message as a Rust string literal.
fn compile_error(message: &str) -> TokenStream {
    format!("compile_error!({message:?});")
        .parse()
        .expect("a compile_error! invocation is valid Rust")
}
