import Glibc

/// glibc calls that Swift's Glibc module hides behind _GNU_SOURCE, bound through dlsym
/// with their exact C signatures (see `Epoll` for why LiveNet does it this way).
enum GlibcExtensions {
    /// accept4(2): the accepted socket comes back non-blocking and close-on-exec in one
    /// call instead of three.
    static let accept4 = symbol("accept4", as: (@convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) -> Int32).self)
    /// pthread_setname_np(3), so loops show by name in top -H and gdb.
    static let setThreadName = symbol("pthread_setname_np", as: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function {
        guard let process = dlopen(nil, RTLD_NOW), let address = dlsym(process, name) else {
            fatalError("glibc has no \(name)")
        }
        return unsafeBitCast(address, to: type)
    }
}
