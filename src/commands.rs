//! commands
pub fn main_entry() -> i32 {
    0
}
