import ECV
import Testing

// iOS SDK guide, "Getting Started". Not here: steps 1 and 2 (adding the .xcframework files,
// the Xcode demo project), which have no Swift.

@Suite struct GettingStartedExamples {
    /// "3. Basic SDK Initialization (Conceptual)". Adapted: the commas the guide leaves out after
    /// `name:` and `useQueueSocket:` (a typo in the guide; Swift needs them); `import
    /// ECV175_iOS_SDK` is `import ECV`; `ECVSdk(config:)` throws (README, Differences).
    @Test func basicSDKInitialization() throws {
        // 1. Define the SDK Configuration (See Configuration for details)
        let sdkConfig = ECVSdkConfiguration(
            name: "Environment_Name", // Give it any name that refers to your app or backend
            serviceUrl: "YOUR_SERVICE_URL", // Replace with your actual service URL
            useQueueSocket: true // or false, Make sure this matches your backend version (true for 1.75+, false for 1.5)
            // Optionally override webrtcUrl, signalingUrl, etc.
        )

        // 2. Initialize the SDK Instance
        // It's recommended to have a single instance managed centrally
        let ecvSdk = try ECVSdk(config: sdkConfig)

        // Store this instance for access throughout your app (e.g., in AppDelegate, DI, Singleton)
        // Example: MyApp.sdkInstance = ecvSdk

        #expect(ecvSdk.config.name == "Environment_Name")
        #expect(ecvSdk.config.useQueueSocket)
        #expect(ecvSdk.config.webrtcUrl == "YOUR_SERVICE_URL" && ecvSdk.config.signalingUrl == "YOUR_SERVICE_URL",
                "webrtcUrl and signalingUrl default to serviceUrl")
    }
}
