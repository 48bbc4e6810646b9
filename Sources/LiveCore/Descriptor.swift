import Glibc

/// Blocking writes to a file descriptor that the process did not open itself (stdout,
/// stderr, a pipe given as a path), shared by the log, the y4m writer and the
/// command line's output.
public enum Descriptor {
    /// Writes all of `bytes` to `fd`: retries EINTR and waits out EAGAIN (a descriptor
    /// inherited in non-blocking mode). Returns 0 when everything went out, otherwise
    /// the errno that stopped it: EPIPE when the reader went away (SIGPIPE must be
    /// ignored for the call to return it), EBADF, EIO, ENOSPC, …
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, base + done, bytes.count - done)
            if n > 0 {
                done += n
                continue
            }
            let code = n < 0 ? errno : EIO
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, 100)
            default:
                return code
            }
        }
        return 0
    }
}
