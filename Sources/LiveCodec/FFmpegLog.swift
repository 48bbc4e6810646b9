import CFFmpeg
import LiveCore
import Synchronization

/// How chatty FFmpeg's own logging (libx264's banner and statistics, decoder warnings)
/// is on stderr. LiveLine reports errors through its own types, so by default FFmpeg
/// speaks only about errors; `setLevel` turns it back up for diagnosis.
public enum FFmpegLog {
    /// Whether a level was set (by `setLevel` or the default); FFmpeg's level is set
    /// under the same lock, so the default never overrides a choice.
    private static let chosen = Mutex(false)

    /// Sets FFmpeg's global log level from LiveLine's (`.info` shows x264's statistics).
    public static func setLevel(_ level: LogLevel) {
        chosen.withLock { chosen in
            chosen = true
            switch level {
            case .none: av_log_set_level(AV_LOG_QUIET)
            case .info: av_log_set_level(AV_LOG_INFO)
            case .warning: av_log_set_level(AV_LOG_WARNING)
            case .error: av_log_set_level(AV_LOG_ERROR)
            }
        }
    }

    /// Applies the quiet default once, unless `setLevel` chose a level first.
    static func applyDefault() {
        chosen.withLock { chosen in
            if !chosen {
                chosen = true
                av_log_set_level(AV_LOG_ERROR)
            }
        }
    }
}
