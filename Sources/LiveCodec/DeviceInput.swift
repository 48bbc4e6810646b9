import CFFmpeg
import LiveCore

/// Opening a libavdevice capture input (ALSA, PulseAudio, x11grab): the one place that
/// registers the devices, finds the input by name and turns a failure into a message
/// that names the device and what to check.
extension FormatInput {
    private static let registerDevices: Void = avdevice_register_all()

    /// Opens `url` with the libavdevice input `format` and its `options`. `device` names
    /// the device for people (`ALSA device 'hw:0'`, `the screen of display :99`); `hint`
    /// says what to check when it does not open. Throws an `FFmpegError` whose message
    /// carries both.
    static func device(format name: String, url: String, options: [(String, String)], device: String,
                       hint: String) throws -> FormatInput {
        _ = registerDevices
        FFmpegLog.applyDefault()
        let call = "avformat_open_input(\(name):\(url))"
        guard let format = av_find_input_format(name) else {
            throw FFmpegError(call: call, message: "this FFmpeg has no \(name) input (libavdevice built without it)")
        }
        do {
            return try FormatInput(url: url, format: format, options: options, what: call)
        } catch let error as FFmpegError {
            throw FFmpegError(call: call, message: "cannot open \(device): \(error.message) (\(hint))")
        }
    }
}
