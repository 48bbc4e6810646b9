// libFuzzer entry point: a line server's answer to `GET /api/live/{id}/members`, as the
// kits read it (LineMemberPage.parse): any bytes are a page, a refusal or malformed,
// never a crash; a page is exactly what its body says.
import Foundation
import LiveSignal

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMemberPage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let answer = Array(UnsafeBufferPointer(start: data, count: size))
    switch Result(catching: { () throws(LineMembersError) -> LineMemberPage in try LineMemberPage.parse(httpAnswer: answer) }) {
    case .success(let page):
        // A page round-trips through its own JSON.
        let again = try? JSONDecoder().decode(LineMemberPage.self, from: JSONEncoder().encode(page))
        if again != page { fatalError("a parsed page does not survive its own encoding: \(page)") }
    case .failure(.refused(let status, _, _)):
        if status == 200 { fatalError("a 200 answer reported as refused") }
    case .failure:
        break
    }
    return 0
}
