// The wire protocol's values an agent bot's API names, re-exported so `import ECVAgent` is enough
// to write their names: the offer a bot accepts, the commands it sends, transfer targets, its
// state from the service, and why a call ended.
@_exported import struct ECVProtocol.CallOffer
@_exported import enum ECVProtocol.DataChannelCommand
@_exported import enum ECVProtocol.VerificationCommand
@_exported import enum ECVProtocol.TransferTarget
@_exported import struct ECVProtocol.AgentStateUpdate
@_exported import struct ECVProtocol.CallEndReason
@_exported import enum ECVProtocol.OfferWithdrawnReason
@_exported import enum MediaPipeline.MediaKind
// The typed cause a failure of the call itself carries (`AgentBotError.call`).
@_exported import enum MediaPipeline.CallFailure
