import ECV
import EnQualify
import Foundation

/// `ecv kyc`: an identity-verification call as the customer, through the EnQualify facade
/// (token → session → settings, the call, the agent's requests, the verdict), printing every
/// delegate call as it arrives and all of them in order at the end.
enum KycCommand {
    static let usage = """
        ecv kyc --service-url URL --api-key KEY [options]   an identity-verification (EnQualify) call as the customer
          --call-type TYPE         the session's call type (default NewCustomer)
          --reference REF          the case's reference (default: a generated one)
          --name "FIRST LAST"      the customer's name; --identity-no N its identity number
          --hearing, --visually    ask for accessible routing (setHandicappedStatus)
          --mapi-cert FILE         pin the back office and the ECV API to this DER certificate (repeatable);
                                   --mapi-cert-base64 B64 the same in Base64 (repeatable)
          --signaling-cert FILE    pin the rooms and signaling to this certificate (repeatable; EnQualify's
                                   signallingCertificateList); --signaling-cert-base64 B64 the same in Base64
          --ice-server URL         ICE server (repeatable; default stun:127.0.0.1:3478, as ecv call and ecv agent)
          --torch                  the device has a torch (default none: an approved request is answered UNAVAILABLE)
          --refuse-torch           the user refuses the agent's torch requests (default: approves)
          --retries-fail           each repeated OCR/face step fails (default: passes)
          --json                   one JSON object per line (each delegate call, then a summary), nothing else
        \(LogOptions.help)
          Exits 0 when the verification call completed with a verdict, 1 otherwise.
        """

    static let spec = OptionSpec(values: ["service-url", "api-key", "call-type", "reference", "name", "identity-no", "mapi-cert",
                                          "mapi-cert-base64", "signaling-cert", "signaling-cert-base64", "ice-server"],
                                 flags: ["hearing", "visually", "torch", "refuse-torch", "retries-fail", "json"]) + LogOptions.spec

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        guard let serviceUrl = arguments.value("service-url") else { throw .usage("ecv kyc needs --service-url (the back office's base URL)") }
        guard let apiKey = arguments.value("api-key") else { throw .usage("ecv kyc needs --api-key (the back office's Token/Create key)") }
        let name = (arguments.value("name") ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        let session = SessionModelVideoCall(callType: arguments.value("call-type") ?? "NewCustomer", userName: name.first,
                                            surname: name.count > 1 ? name[1] : nil, identityType: "ID Card",
                                            identityNo: arguments.value("identity-no"),
                                            reference: arguments.value("reference") ?? "REF-\(Int.random(in: 100_000...999_999))")
        let base = BaseModelVideoCall(signallingCertificateList: nonEmpty(arguments.values("signaling-cert").map(Arguments.absolute)),
                                      mapiCertificateList: nonEmpty(arguments.values("mapi-cert").map(Arguments.absolute)),
                                      signallingCertificateBase64List: nonEmpty(arguments.values("signaling-cert-base64")),
                                      mapiCertificateBase64List: nonEmpty(arguments.values("mapi-cert-base64")),
                                      baseURL: serviceUrl, locale: "EN", mobileUser: "ecv-cli", apiKey: apiKey,
                                      iceServers: arguments.values("ice-server").nilIfEmpty ?? [AgentCommand.defaultICEServer])
        let (hearing, visually) = (arguments.flag("hearing"), arguments.flag("visually"))
        let hasTorch = arguments.flag("torch"), refuses = arguments.flag("refuse-torch"), retriesFail = arguments.flag("retries-fail")
        let json = arguments.flag("json")
        try LogOptions.apply(&arguments)
        try arguments.finish()
        let customer = KycCustomer(printer: CallPrinter(json: json), approvesTorch: { _ in !refuses }, retriesPass: !retriesFail)
        if hasTorch { customer.call.torch = PrintedTorch(json: json) }
        let succeeded = await customer.run(sessionModel: session, baseModel: base, hearing: hearing, visually: visually)
        printSummary(customer, json: json)
        if !succeeded { throw .failed(customer.failure ?? "the verification call did not complete") }
    }

    static func printSummary(_ customer: KycCustomer, json: Bool) {
        if json {
            NDJSON.emit(["event": "summary", "delegateCalls": customer.trail, "verdict": customer.verdictText ?? NSNull(),
                         "failure": customer.failure ?? NSNull()])
            return
        }
        say("")
        say("Delegate calls, in order:")
        for (index, entry) in customer.trail.enumerated() { say(String(format: "  %2d. ", index + 1) + entry) }
        say("Verdict: " + (customer.verdictText ?? "none" + (customer.failure.map { " (\($0))" } ?? "")))
    }

    private static func nonEmpty(_ list: [String]) -> [String]? { list.isEmpty ? nil : list }
}

/// A torch that only says what it was told (a headless machine has none to switch).
struct PrintedTorch: EnQualifyTorch {
    let json: Bool

    func setTorch(on: Bool) async -> Bool {
        if json { NDJSON.emit(["event": "torch", "on": on]) } else { say("          torch     \(on ? "on" : "off")") }
        return true
    }
}
