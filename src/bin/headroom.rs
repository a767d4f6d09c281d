//! The `headroom` binary: `headroom::cli::run_with_stdin` on the process's arguments (stdin is
//! read only for a `-` text), its text written to stdout and stderr, its code returned as the
//! exit status.
//!
//! A panic would be a bug in Headroom; it is caught and reported as an internal error (exit 3)
//! instead of a backtrace. Writes ignore a closed pipe (`headroom models | head`); any other
//! failure to write the output is reported, with exit status 2.

use std::io::Write;
use std::process::ExitCode;

/// Exit status for a bug in Headroom (a caught panic). Never expected.
const EXIT_INTERNAL: u8 = 3;
/// Exit status when stdout cannot take the output (a full disk, `> /dev/full`).
const EXIT_OUTPUT: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| {
        headroom::cli::run_with_stdin(&args, &mut std::io::stdin().lock())
    });
    match outcome {
        Ok(o) => {
            let mut out = std::io::stdout().lock();
            let written = out
                .write_all(o.stdout.as_bytes())
                .and_then(|()| out.flush());
            let _ = std::io::stderr().lock().write_all(o.stderr.as_bytes());
            match written {
                // A reader that stopped early (`| head`) is not an error; a full disk is.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "error: the output could not be written: {e}"
                    );
                    ExitCode::from(EXIT_OUTPUT)
                }
                _ => ExitCode::from(u8::try_from(o.code).unwrap_or(EXIT_INTERNAL)),
            }
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
