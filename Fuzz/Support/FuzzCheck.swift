/// Stops the fuzz target with `message` when `condition` is false; unlike `precondition`, the
/// message survives `-O`, so the crash log says which property broke.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
