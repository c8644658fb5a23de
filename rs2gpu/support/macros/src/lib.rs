//! The `#[kernel]` attribute of rs2gpu.
//!
//! rs2gpu reads the Rust source of a `#[kernel]` function itself and translates it to CUDA/HIP C++. For rustc
//! the attribute is only a marker: it hands the function back unchanged, so the same source compiles on the
//! CPU and its results are the reference the GPU must reproduce. The crate uses bare `proc_macro` and has no
//! dependencies, so it builds offline.

use proc_macro::{Delimiter, TokenStream, TokenTree};

/// Lets the GPU build contract `a * b + c` into fused multiply-adds.
const FAST_MATH: &str = "fast_math";
/// `types(f32, f64)`: the instantiations of a generic kernel, each a type or a parenthesized list of types.
const TYPES: &str = "types";

/// Marks a function as a GPU kernel; `#[kernel(fast_math)]` also opts in to fast math on the GPU, and
/// `#[kernel(types(f32, f64))]` lists the types a generic kernel is translated for.
///
/// The function is returned unchanged: its CPU behaviour is the specification. Any other argument is a
/// compile error here, so a typo cannot silently change what the GPU computes.
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

/// Accepts `fast_math` and `types(...)`, each at most once; otherwise returns a message naming the bad
/// argument.
fn check_args(attr: TokenStream) -> Result<(), String> {
    let mut args: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for token in attr {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => args.push(Vec::new()),
            _ => args.last_mut().unwrap().push(token),
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for tokens in args.iter().filter(|tokens| !tokens.is_empty()) {
        let name = match tokens.as_slice() {
            [TokenTree::Ident(i)] if i.to_string() == FAST_MATH => FAST_MATH,
            [TokenTree::Ident(i), TokenTree::Group(g)]
                if i.to_string() == TYPES && g.delimiter() == Delimiter::Parenthesis && !g.stream().is_empty() =>
            {
                TYPES
            }
            _ => {
                let bad = tokens.iter().cloned().collect::<TokenStream>().to_string();
                return Err(format!(
                    "unknown #[kernel] argument `{bad}`: the accepted arguments are `{FAST_MATH}` and \
                     `{TYPES}(T1, T2, ...)`"
                ));
            }
        };
        if seen.contains(&name) {
            return Err(format!("#[kernel] argument `{name}` is given more than once"));
        }
        seen.push(name);
    }
    Ok(())
}

/// `compile_error!("message");` as tokens; `{:?}` quotes and escapes the message as a Rust string literal.
fn compile_error(message: &str) -> TokenStream {
    format!("compile_error!({message:?});")
        .parse()
        .expect("a compile_error! invocation is valid Rust")
}
