@testable import ForwardingTransport
import CurlTransport
import EventLoop
import Foundation
import TestSupport
import Testing
import Forwarding

/// The forwarding client against hostile targets (the loopback recorder's
/// misbehaving answers): an answer is judged by its head, a body is read
/// only up to its limit, what a target echoes of the request's secrets is
/// never kept, and plain http reaches this computer only.
@Suite struct ForwardPosterTests {
    /// Posts `request` on the tests' loop; its answer, and how long it took.
    func post(_ request: ForwardRequest, timeout: Duration = .seconds(20)) async -> (ForwardAnswer, Duration) {
        let started = ContinuousClock.now
        let answer: ForwardAnswer = await withCheckedContinuation { continuation in
            TestLoop.shared.execute {
                let poster = ForwardPoster(caFile: nil, userAgent: "ccrelay-test", timeout: timeout, loop: TestLoop.shared)
                poster.post(request) { answer in
                    withExtendedLifetime(poster) { continuation.resume(returning: answer) }
                }
            }
        }
        return (answer, ContinuousClock.now - started)
    }

    func request(_ url: String, headers: [String] = []) -> ForwardRequest {
        ForwardRequest(url: url, headers: headers + ["Content-Type: application/json", "Idempotency-Key: 0123456789abcdef"],
                     body: #"{"title":"Logged out"}"#)
    }

    /// issue 20: an endless 200 body was read for the whole timeout (80 GB at full CPU) and then retried.
    @Test func anEndlessBodyAfterA200IsADeliveryAndReadingStopsAtTheLimit() async throws {
        let target = try RelayRecorder(.webhook, behave: "endless-body")
        let (answer, took) = await post(request("http://127.0.0.1:\(target.port)/hook"), timeout: .seconds(90))
        #expect(answer.delivered, "\(answer)")
        #expect(answer.status == 200)
        // The timeout is 90 s; reading to the limit takes well under a second (40 s of room for a loaded 2-core machine).
        #expect(took < .seconds(40), "it stopped reading at the limit, not at the timeout: \(took)")
    }

    /// issue 20: a 200 whose body trickles in timed out and the alert was sent again and again.
    @Test func aSlowBodyAfterA200IsADelivery() async throws {
        let target = try RelayRecorder(.webhook, behave: "slow-body")
        let (answer, _) = await post(request("http://127.0.0.1:\(target.port)/hook"), timeout: .seconds(3))
        #expect(answer.delivered, "the head said 200: \(answer)")
        #expect(target.requests().count == 1)
    }

    /// issue 20: a 401 page echoing the request put the query secret and the
    /// Authorization value into the log, status, history and the bubble.
    @Test func anAnswerThatEchoesTheRequestIsKeptWithoutItsSecrets() async throws {
        let target = try RelayRecorder(.webhook, behave: "echo-401")
        let url = "http://hook-user:hook-pass-77@127.0.0.1:\(target.port)/hooks/T0KENINTHEPATH0123456?secret=s3cr3t-v4lue&x=1"
        let (answer, _) = await post(request(url, headers: ["Authorization: Bearer t0k-abcdef-999", "X-Api-Key: k3y-9876"]))
        #expect(!answer.delivered && answer.status == 401, "\(answer)")
        let kept = answer.text + " " + (answer.failure ?? "")
        #expect(kept.contains("401 Unauthorized"), "\(kept)")
        for secret in ["s3cr3t-v4lue", "t0k-abcdef-999", "k3y-9876", "hook-pass-77", "T0KENINTHEPATH0123456"] {
            #expect(!kept.contains(secret), "\(secret) in \(kept)")
        }
        #expect(target.everythingReceived().contains("s3cr3t-v4lue"), "the target did get the request as sent")
    }

    /// issue 20: "http only to loopback" was a check of the name; an address
    /// that is not a loopback one is refused when curl is about to connect.
    @Test func plainHTTPConnectsOnlyToALoopbackAddress() async throws {
        let target = try RelayRecorder(.webhook)
        // 0.0.0.0 reaches this computer's servers, but it is not a loopback address.
        let (refused, _) = await post(request("http://0.0.0.0:\(target.port)/hook"))
        #expect(!refused.delivered, "\(refused)")
        #expect(target.requests().isEmpty, "nothing was sent")
        let (delivered, _) = await post(request("http://127.0.0.1:\(target.port)/hook"))
        #expect(delivered.delivered, "\(delivered)")
        #expect(target.requests().count == 1)
    }
}
