//! The `headroom` binary: `headroom::io::cli::run` on the process's arguments, its text written
//! to stdout and stderr, its code returned as the exit status.
//!
//! A panic would be a bug in Headroom; it is caught and reported as an internal error (exit 3)
//! instead of a backtrace. Writes ignore a closed pipe (`headroom models | head`).

use std::io::Write;
use std::process::ExitCode;

/// Exit status for a bug in Headroom (a caught panic). Never expected.
const EXIT_INTERNAL: u8 = 3;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| headroom::io::cli::run(&args));
    match outcome {
        Ok(o) => {
            let _ = std::io::stdout().lock().write_all(o.stdout.as_bytes());
            let _ = std::io::stderr().lock().write_all(o.stderr.as_bytes());
            ExitCode::from(u8::try_from(o.code).unwrap_or(EXIT_INTERNAL))
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: internal error in headroom (a bug; please report the command line): {what}"
            );
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}
