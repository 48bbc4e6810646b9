import Foundation
import LiveAuth

/// `liveline token`: makes the server's secret file, or mints one access token with it.
enum TokenCommand: Command {
    static let name = "token"
    static let help = """
        Usage: liveline token --new-secret FILE
               liveline token --secret-file FILE --sub USER PERMISSION... [--ttl DURATION]

        Access tokens are JWTs signed with HS256 (any JWT library can mint them with the
        secret file's text as the key). 'liveline serve --auth-secret-file FILE' checks them.

          --new-secret FILE      create FILE with a new random secret, mode 0600 (never overwrites)
          --secret-file FILE     the secret to sign with
          --sub USER             the user id the token is for (its "sub" claim)
          --ttl DURATION         lifetime: 30s, 20m, 1h, 2d (default 1h, at most 3650d)

        Permissions (each repeatable; PATH may end in * to cover everything starting so):
          --publish PATH         publish the RTMP stream APP/NAME, e.g. live/room1 or live/*
          --play PATH            play the RTMP stream APP/NAME
          --line-host ID         create and run the co-host line ID as its host
          --line-guest ID        join the co-host line ID as a guest
          --api PATH             call the HTTP API route PATH (e.g. api/streams; api/* for all)
          --call USER            register for 1v1 calls as USER (give the same as --sub); the
                                 call's streams also need --publish and --play, e.g. call/*

        Prints the token on one line. Clients pass it as ?token=TOKEN in RTMP URLs and
        as 'Authorization: Bearer TOKEN' to the HTTP API.
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        if let path = try arguments.value("--new-secret") {
            try arguments.finish()
            try TokenSecret.create(path: path)
            printError("liveline token: wrote a new secret to \(path) (mode 0600)")
            return 0
        }
        guard let secretFile = try arguments.value("--secret-file") else {
            throw UsageError("give --secret-file FILE to mint a token, or --new-secret FILE to make a secret")
        }
        guard let sub = try arguments.value("--sub"), !sub.isEmpty else {
            throw UsageError("--sub USER is required (the user id the token is for)")
        }
        let ttl = try arguments.duration("--ttl", in: 1...(3650 * 86_400)) ?? 3600
        var permissions: [AccessPermission] = []
        for (option, action) in [("--publish", AccessAction.publish), ("--play", .play),
                                 ("--line-host", .lineHost), ("--line-guest", .lineGuest), ("--api", .api),
                                 ("--call", .call)] {
            for path in try arguments.values(option) {
                guard !path.isEmpty else { throw UsageError("\(option) needs a non-empty path") }
                permissions.append(AccessPermission(action: action, path: path))
            }
        }
        try arguments.finish()
        guard !permissions.isEmpty else {
            throw UsageError("give at least one permission: --publish, --play, --line-host, --line-guest, --api or --call")
        }
        let secret = try TokenSecret.load(path: secretFile)
        let now = Int64(Date().timeIntervalSince1970)
        let claims = AccessClaims(sub: sub, iat: now, exp: now + ttl, perm: permissions)
        printLine(AccessToken.mint(claims, secret: secret))
        return 0
    }
}
