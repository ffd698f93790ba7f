import Foundation
import Testing
import Webhooks

@Suite struct WebhookSigningTests {
    /// The Standard Webhooks reference vector.
    @Test func signatureMatchesTheSpecVector() {
        let key = WebhookSigner.key(of: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        let signature = WebhookSigner.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330,
                                                body: Array("{\"test\": 2432232314}".utf8), key: key)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSigner.key(of: "nope") == nil)
        #expect(WebhookSigner.key(of: WebhookSigner.generateSecret())?.count == 32)
    }

    @Test func retryScheduleJittersHonoursRetryAfterAndEnds() {
        let schedule = RetrySchedule(delays: [5, 300])
        #expect(schedule.maxAttempts == 3)
        #expect(schedule.delayMilliseconds(afterAttempt: 1, retryAfter: nil, random: 0) == 4000)
        #expect(schedule.delayMilliseconds(afterAttempt: 1, retryAfter: nil, random: 0.999)! > 5900)
        #expect(schedule.delayMilliseconds(afterAttempt: 1, retryAfter: 60, random: 0.5) == 60000)
        #expect(schedule.delayMilliseconds(afterAttempt: 2, retryAfter: 1, random: 0.5) == 300000)
        #expect(schedule.delayMilliseconds(afterAttempt: 3, retryAfter: nil) == nil)
    }

    @Test func gorushBodyGroupsTokensByPlatform() throws {
        let data = """
            {"message":{"_id":"m1","text":"hi","threadId":"a:b"},"sender":{"_id":"a","name":"Alice"},
             "recipients":[{"_id":"b","devices":[{"platform":"ios","token":"t1"},{"platform":"web","token":"w"},{"platform":"android","token":"t2"}]}]}
            """
        let body = try #require(WebhookPayload.body(format: "gorush", type: "message.created", timestamp: "t", data: data))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let notes = try #require(json["notifications"] as? [[String: Any]])
        #expect(notes.map { $0["platform"] as? Int } == [1, 2])
        #expect(notes[0]["tokens"] as? [String] == ["t1"] && notes[0]["title"] as? String == "Alice")
        #expect(WebhookPayload.body(format: "gorush", type: "message.created", timestamp: "t",
                                    data: "{\"recipients\":[{\"_id\":\"b\",\"devices\":[]}]}") == nil)
        let standard = String(decoding: WebhookPayload.body(format: "standard", type: "x.created", timestamp: "2026", data: "{\"a\":1}")!, as: UTF8.self)
        #expect(standard == "{\"type\":\"x.created\",\"timestamp\":\"2026\",\"data\":{\"a\":1}}")
    }
}
