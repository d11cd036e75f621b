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
          --signalling-cert FILE   pin the rooms and signalling (repeatable); --signalling-cert-base64 B64
          --torch                  the device has a torch (default none: an approved request is answered UNAVAILABLE)
          --refuse-torch           the user refuses the agent's torch requests (default: approves)
          --retries-fail           each repeated OCR/face step fails (default: passes)
        """

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, flags: ["hearing", "visually", "torch", "refuse-torch", "retries-fail"])
        guard let serviceUrl = arguments.value("service-url") else { throw .usage("ecv kyc needs --service-url (the back office's base URL)") }
        guard let apiKey = arguments.value("api-key") else { throw .usage("ecv kyc needs --api-key (the back office's Token/Create key)") }
        let name = (arguments.value("name") ?? "").split(separator: " ", maxSplits: 1).map(String.init)
        let session = SessionModelVideoCall(callType: arguments.value("call-type") ?? "NewCustomer", userName: name.first,
                                            surname: name.count > 1 ? name[1] : nil, identityType: "ID Card",
                                            identityNo: arguments.value("identity-no"),
                                            reference: arguments.value("reference") ?? "REF-\(Int.random(in: 100_000...999_999))")
        let base = BaseModelVideoCall(signallingCertificateList: nonEmpty(arguments.values("signalling-cert")),
                                      mapiCertificateList: nonEmpty(arguments.values("mapi-cert")),
                                      signallingCertificateBase64List: nonEmpty(arguments.values("signalling-cert-base64")),
                                      mapiCertificateBase64List: nonEmpty(arguments.values("mapi-cert-base64")),
                                      baseURL: serviceUrl, locale: "EN", mobileUser: "ecv-cli", apiKey: apiKey)
        let (hearing, visually) = (arguments.flag("hearing"), arguments.flag("visually"))
        let hasTorch = arguments.flag("torch"), refuses = arguments.flag("refuse-torch"), retriesFail = arguments.flag("retries-fail")
        try arguments.finish()
        Logger.setLevel(logLevel: .warn)
        let customer = KycCustomer(printer: CallPrinter(json: false), approvesTorch: { _ in !refuses }, retriesPass: !retriesFail)
        if hasTorch { customer.call.torch = PrintedTorch() }
        let succeeded = await customer.run(sessionModel: session, baseModel: base, hearing: hearing, visually: visually)
        printSummary(customer)
        if !succeeded { throw .failed(customer.failure ?? "the verification call did not complete") }
    }

    static func printSummary(_ customer: KycCustomer) {
        say("")
        say("Delegate calls, in order:")
        for (index, entry) in customer.trail.enumerated() { say(String(format: "  %2d. ", index + 1) + entry) }
        say("Verdict: " + (customer.verdictText ?? "none" + (customer.failure.map { " (\($0))" } ?? "")))
    }

    private static func nonEmpty(_ list: [String]) -> [String]? { list.isEmpty ? nil : list }
}

/// A torch that only says what it was told (a headless machine has none to switch).
struct PrintedTorch: EnQualifyTorch {
    func setTorch(on: Bool) async -> Bool {
        say("          torch     \(on ? "on" : "off")")
        return true
    }
}
