import LiveCore
import LiveNet
import LiveSignal

/// The line's HTTP routes: the WebSocket `GET /line`, the living list `GET /api/live`
/// (the anyRTC SDK's getLivingList shape) and `GET /api/live/{liveId}/members?page=N&size=S`
/// (S to a page, 15 when absent, at most `maxPageSize`; pages from 1, a page past the
/// end empty; 400 for a page that is not a number from 1 up to Int.max or a size that is
/// not one from 1 to `maxPageSize`; 404 with code 600 for a line that has not started).
public enum LineHTTPAPI {
    /// The most members one page of `/api/live/{liveId}/members` holds.
    public static let maxPageSize = 100


    public static func add(_ line: LineService, to router: inout HTTPRouter) {
        router.get("/line", line.webSocketHandler())
        router.get("/api/live") { _ in .response(.json(text: line.livingListJSON())) }
        router.get("/api/live/{liveId}/members") { request in
            let liveId = request.pathParameters["liveId"] ?? ""
            let pageText = request.query("page") ?? "1"
            guard let page = Int(pageText), page >= 1 else {
                return .response(.json(LineEvent(.reply, code: .invalidParams, message: "page must be a number from 1, not '\(pageText)'"),
                                       status: .badRequest))
            }
            let sizeText = request.query("size")
            let size = sizeText.flatMap { Int($0) }
            if let sizeText, !(1...maxPageSize).contains(size ?? 0) {
                return .response(.json(LineEvent(.reply, code: .invalidParams, message: "size must be a number from 1 to \(maxPageSize), not '\(sizeText)'"),
                                       status: .badRequest))
            }
            guard let members = line.memberPage(liveId: liveId, page: page, size: size) else {
                return .response(.json(LineEvent(.reply, code: .lineNotStarted, message: "line \(liveId) has not started"),
                                       status: .notFound))
            }
            return .response(.json(members))
        }
    }
}
