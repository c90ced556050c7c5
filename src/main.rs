//! The `shipmoor` binary: parse the command line, run it, map the outcome to an exit code.

fn main() {
    let code = shipmoor::commands::main_entry();
    std::process::exit(code);
}
