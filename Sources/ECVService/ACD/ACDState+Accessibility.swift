import ECVProtocol

extension ACDState {
    /// New accessibility flags for a live call: its acdAttributes and priority follow them, and a
    /// waiting call moves in its queue at once (the index is rebuilt from the touched record, then
    /// routing runs). The flags of a call that is ringing or connected are recorded for a later
    /// re-route (an offer that times out, a transfer).
    mutating func setAccessibility(rtcId: String, hearingImpaired: Bool, visuallyImpaired: Bool) throws(ACDError) -> Int {
        guard var record = interactions[rtcId] else { throw .unknownRtcId(rtcId) }
        record.acdAttributes[ACDAttributeKey.hearingImpaired] = hearingImpaired ? "true" : "false"
        record.acdAttributes[ACDAttributeKey.visuallyImpaired] = visuallyImpaired ? "true" : "false"
        record.priority = try Self.priority(of: record.acdAttributes, floor: configuration.accessibilityPriority)
        interactions[rtcId] = record
        route()
        return record.priority
    }
}

extension ACDState {
    /// Whether the caller is flagged hearing or visually impaired (acdAttributes, validated at DialEx).
    static func isImpaired(_ record: InteractionRecord) -> Bool {
        [ACDAttributeKey.hearingImpaired, ACDAttributeKey.visuallyImpaired].contains { record.acdAttributes[$0]?.lowercased() == "true" }
    }
}
