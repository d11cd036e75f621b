import ECV
import Testing

// iOS SDK guide, "Customization Guide". Both snippets are written half in Kotlin (the guide's
// Android edition shows through: "Inside Application.onCreate", `val`, `name = value` arguments);
// they are adapted to Swift, and each change is named where it is made.

/// "2. Configuration", Fixed Configuration. Adapted from Kotlin: `serviceUrl = …` and
/// `useQueueSocket = …` are labelled arguments `serviceUrl: …`, the missing commas are added,
/// and `ECVSdk("MyAppProdInstance", prodConfig)` is tried (its initialiser throws for a pin it
/// cannot honour).
func fixedConfiguration() throws -> ECVSdk {
    // Example: Inside Application.onCreate or DI module
    let prodConfig = ECVSdkConfiguration(
        name: "My App Prod",
        serviceUrl: "https://your-prod.ecv.example.com",
        useQueueSocket: true // Assuming backend is v1.75+
        // ... other params if needed ...
    )

    let sdkInstance = try ECVSdk("MyAppProdInstance", prodConfig)
    return sdkInstance
}

/// "3. Call Data (DialCallParameters)". Adapted from Kotlin: `val` is `let`, `name = value`
/// arguments are `name: value`, and they follow the Swift initialiser's order (Kotlin's named
/// arguments may come in any order; here `queue` moves before `acdAttributes`); the calls are
/// awaited, the optional call unwrapped, `start` is labelled (`start(dialCallParameters:)`), and
/// `getUserAuthToken()` is a parameter.
func placeACallWithAppData(sdkInstance: ECVSdk, getUserAuthToken: () -> String) async -> DialCallParameters {
    // User profile data
    let userId = "user123"
    let accountType = "Premium"
    let intent = "Billing Inquiry"

    // Target queue/skill
    let targetQueue = "BillingSupport"

    // Get SDK instance and create call
    let videoCall = await sdkInstance.createVideoCall()
    // ... wait for GotRtcId ...

    // Build parameters with app-specific data
    let dialParams = DialCallParameters(
        callerName: "User \(userId)", // Or actual user name
        attributes: [
            "userId": userId,
            "accountType": accountType,
            "callIntent": intent
        ],
        queue: targetQueue, // Explicitly set the target queue
        acdAttributes: [
            "skill": "Billing" // Example ACD attribute
        ],
        additionalHeaders: ["Authorization": "Bearer \(getUserAuthToken())"] // Example auth
    )

    // Start the call
    await videoCall?.start(dialCallParameters: dialParams)

    // Navigate to Queue/Waiting screen
    return dialParams
}

@Suite struct CustomizationGuideExamples {
    @Test func fixedConfigurationBuildsTheProductionSDK() throws {
        let sdk = try fixedConfiguration()
        #expect(sdk.config.name == "My App Prod" && sdk.config.serviceUrl == "https://your-prod.ecv.example.com")
        #expect(sdk.config.useQueueSocket)
        #expect(sdk.instanceName == "MyAppProdInstance")
    }
}
