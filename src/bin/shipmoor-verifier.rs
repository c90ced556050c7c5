//! `shipmoor-verifier`: the `shipmoor` binary of the verifier build under a name of its own
//! (Cargo.toml, `verifier-bin`), for smoke tests beside the tests' own `shipmoor`.

fn main() {
    std::process::exit(shipmoor::commands::main_entry());
}
