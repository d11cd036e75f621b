import MediaPipeline
import Testing

struct RetransmissionBudgetTests {
    @Test("before any estimate every packet is resent, but a packet asked for again within a round trip is not")
    func unlimitedButOncePerRoundTrip() {
        var budget = RetransmissionBudget()
        let first = (UInt16(0)..<200).filter { budget.admit(ssrc: 7, seqnum: $0, at: Double($0) * 0.001, roundTrip: 0.1) }
        #expect(first.count == 200)
        let again = budget.admit(ssrc: 7, seqnum: 5, at: 0.1, roundTrip: 0.1)
        #expect(!again, "5 was resent 95 ms ago")
        let otherStream = budget.admit(ssrc: 8, seqnum: 5, at: 0.1, roundTrip: 0.1)
        #expect(otherStream, "another stream's 5")
        let later = budget.admit(ssrc: 7, seqnum: 5, at: 0.2, roundTrip: 0.1)
        #expect(later, "a round trip later it may have been lost again")
        #expect(budget.admitted == 202 && budget.refused == 1)
    }

    @Test("following an estimate, resends take a quarter of it: a burst of 250 ms, then its rate")
    func aQuarterOfTheEstimate() {
        var budget = RetransmissionBudget()
        budget.follow(estimateKbps: 500)
        // 125 kbit/s of 1200-byte packets: 13 a second, 3 at once. 1,000 requests over 2 s.
        let answered = (0..<1000).filter { index in
            budget.admit(ssrc: 7, seqnum: UInt16(index), at: Double(index) * 0.002, roundTrip: 0.05)
        }.count
        #expect((27...31).contains(answered), "\(answered) answered")
        #expect(budget.refused == 1000 - answered)
    }
}
