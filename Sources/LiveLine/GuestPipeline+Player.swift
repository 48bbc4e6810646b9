import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

extension GuestPipeline {
    // MARK: - Loop thread

    func makePlayer(url: PlayURL, loop: EventLoop) -> any StreamPlayer {
        let player = url.makePlayer(loop: loop, connectTimeout: configuration.timeout)
        player.onEvent = { [weak self, weak player] event in
            guard let self, let player, currentPlayer === player else { return }
            handle(event)
        }
        return player
    }

    func retry(after error: RTMPClientError) {
        guard let loop, requestedEnd() == nil,
              let delay = configuration.reconnect.delay(attempt: attempt, unit: Double.random(in: 0...1)) else {
            return forcePush(.end(.failed, Error.player(error)))
        }
        attempt += 1
        push(.reconnecting(attempt))
        retryTimer = loop.schedule(after: .milliseconds(Int64(delay * 1000))) { [weak self] in
            guard let self, self.requestedEnd() == nil else { return }
            // What comes next starts a new picture: wait for its keyframe.
            self.skippingToKeyframe = true
            guard let tokens = self.configuration.tokenProvider.map(StreamTokenSource.init) else {
                return self.reconnect(to: self.configuration.url, loop: loop)
            }
            tokens.fetch(for: self.configuration.url) { [weak self] result in
                loop.execute { [weak self] in
                    guard let self, self.requestedEnd() == nil else { return }
                    switch result {
                    case .success(let url):
                        self.reconnect(to: url, loop: loop)
                    case .failure(let tokenError):
                        // Counts as a failed try: the provider may answer next time.
                        Log.warning("play of \(self.configuration.url): \(tokenError)")
                        self.retry(after: error)
                    }
                }
            }
        }
    }

    /// The first connect with a fresh token, asked of the provider on its own task; no
    /// answer within the timeout ends the run (212), as does the provider's failure
    /// (its code). Loop thread.
    func connect(tokens: StreamTokenSource, loop: EventLoop) {
        firstConnectTimer = loop.schedule(after: configuration.timeout) { [weak self] in
            guard let self, firstConnectTimer != nil else { return }
            firstConnectTimer = nil
            forcePush(.end(.failed, LiveError(.authTimeout, "the token provider gave no token within \(configuration.timeout)")))
        }
        tokens.fetch(for: configuration.url) { [weak self] result in
            loop.execute { [weak self] in
                // Too late: the run has ended on the time limit.
                guard let self, let timer = firstConnectTimer else { return }
                timer.cancel()
                firstConnectTimer = nil
                switch result {
                case .success(let url): reconnect(to: url, loop: loop)
                case .failure(let error): forcePush(.end(.failed, error))
                }
            }
        }
    }

    /// A new player of `url` becomes the current one, unless the run is ending. Loop thread.
    func reconnect(to url: PlayURL, loop: EventLoop) {
        guard !connectsEnded else { return }
        let player = makePlayer(url: url, loop: loop)
        shared.withLock { $0.player = player }
        player.start()
    }

    func handle(_ event: RTMPPlayer.Event) {
        switch event {
        case .metadata(let metadata):
            push(.metadata(metadata))
        case .decoderConfiguration(let avcC, let configuration):
            let input = Input.configuration(avcC, configuration)
            if !push(input) { resendConfiguration = input }
        case .audioConfiguration(let asc, let config):
            let input = Input.audioConfiguration(asc, config)
            if !push(input) { resendAudioConfiguration = input }
        case .audio(let packet):
            sawMediaNow()
            if let pending = resendAudioConfiguration {
                guard push(pending) else { return countDrop(audio: true) }
                resendAudioConfiguration = nil
            }
            if !push(.audio(packet)) { countDrop(audio: true) }
        case .video(let packet):
            sawMediaNow()
            if skippingToKeyframe {
                guard packet.isKeyframe else { return countDrop() }
                skippingToKeyframe = false
            }
            if let pending = resendConfiguration {
                guard push(pending) else { return countDrop() }
                resendConfiguration = nil
            }
            if !push(.video(packet)) {
                skippingToKeyframe = true
                countDrop()
            }
        case .streamEnded:
            push(.end(.streamEnded, nil))
        case .failed(let error):
            if everPlayed, case .rejected = error {
                forcePush(.end(.failed, Error.player(error)))
            } else if everPlayed {
                retry(after: error)
            } else {
                forcePush(.end(.failed, Error.player(error)))
            }
        case .closed:
            forcePush(.end(.stopped, nil))
        case .playing:
            if everPlayed { shared.withLock { $0.stats.reconnects += 1 } }
            everPlayed = true
            attempt = 0
            push(.playing)
            // nginx-rtmp answers play of an unpublished name with Play.Start and then
            // silence: without a bound the guest would wait forever.
            guard noVideoTimer == nil, !sawMedia, let loop else { return }
            noVideoTimer = loop.schedule(after: configuration.timeout) { [weak self] in
                guard let self, !self.sawMedia else { return }
                let limit = configuration.timeout.components
                let seconds = Double(limit.seconds) + Double(limit.attoseconds) / 1e18
                self.forcePush(.end(.failed, Error.noMedia(url: configuration.url.description, seconds: seconds)))
            }
        case .connected, .status:
            break
        }
    }

    func sawMediaNow() {
        sawMedia = true
        noVideoTimer?.cancel()
        noVideoTimer = nil
    }

    func countDrop(audio: Bool = false) {
        shared.withLock { state in
            if audio {
                state.stats.audioPackets += 1
                state.stats.skippedAudioPackets += 1
            } else {
                state.stats.droppedPackets += 1
        }
        }
    }

    @discardableResult
    func push(_ input: Input) -> Bool { queue.push(input) }

    /// An end must get through a full queue: wait a moment for room.
    func forcePush(_ input: Input) {
        for _ in 0..<200 where !queue.push(input) {
            if queue.isClosed { return }
            usleep(5000)
        }
    }
}
