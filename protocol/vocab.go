package protocol

// Identity and transport constants (docs/device-protocol.md#channels).
const (
	DefaultPackage         = "com.alipay.hulu"
	DefaultDevicePort      = 23342
	HarnessProtocolVersion = "2.0"
	AgentProtocolVersion   = "1.0"
	// AdbSchemeActivity is the DUMP-protected mutation entry point.
	AdbSchemeActivity = "com.alipay.hulu.common.scheme.AdbSchemeActivity"
	// SchemeActivity is the public deep link (never used by the host).
	SchemeActivity  = "com.alipay.hulu.common.scheme.SchemeActivity"
	schemeURIPrefix = "solopi://startaction/"
	HTTPPathPrefix  = "/scheme/"
	ViewAction      = "android.intent.action.VIEW"
)

// Scheme action names (docs/device-protocol.md#resolvers).
const (
	ActionHarness       = "harness"
	ActionReplay        = "replay"
	ActionAgent         = "agent"
	ActionConfig        = "config"
	ActionStatus        = "status"
	ActionPerformance   = "performance"
	ActionRecord        = "record"
	ActionScreenRecord  = "screen-record"
	ActionScan          = "scan"
	ActionVideoAnalysis = "video-analysis"
	ActionStress        = "stress"
	ActionHistory       = "history"
	ActionPlugin        = "plugin"
)

// Harness `type` values (docs/device-protocol.md#harness).
const (
	HarnessCapabilities     = "capabilities"
	HarnessHealth           = "health"
	HarnessInfo             = "info"
	HarnessApps             = "apps"
	HarnessCases            = "cases"
	HarnessCase             = "case"
	HarnessStatus           = "status"
	HarnessResult           = "result"
	HarnessCancel           = "cancel"
	HarnessCaseImport       = "case-import"
	HarnessCaseImportStatus = "case-import-status"
	HarnessCaseDelete       = "case-delete"
	HarnessCaseDeleteStatus = "case-delete-status"
	HarnessAdbConnect       = "adb-connect"
	HarnessAdbConnectStatus = "adb-connect-status"
)

// Agent `type` values (docs/device-protocol.md#agent-sessions).
const (
	AgentCapabilities = "capabilities"
	AgentStartStatus  = "start-status"
	AgentStatus       = "status"
	AgentObserve      = "observe"
	AgentReceiptQuery = "receipt"
	AgentTimeline     = "timeline"
	AgentStart        = "start"
	AgentAct          = "act"
	AgentPause        = "pause"
	AgentResume       = "resume"
	AgentEnd          = "end"
	AgentCancel       = "cancel"
)

// Parameter names used on the wire.
const (
	ParamType                = "type"
	ParamAction              = "action"
	ParamMode                = "mode"
	ParamRequestID           = "requestId"
	ParamRunID               = "runId"
	ParamSessionID           = "sessionId"
	ParamOwnerToken          = "ownerToken"
	ParamStepID              = "stepId"
	ParamObservationID       = "observationId"
	ParamNodeID              = "nodeId"
	ParamText                = "text"
	ParamDirection           = "direction"
	ParamDurationMs          = "durationMs"
	ParamDistance            = "distance"
	ParamCaseName            = "caseName"
	ParamConfirmCaseName     = "confirmCaseName"
	ParamCaseID              = "caseId"
	ParamCaseFingerprint     = "caseFingerprint"
	ParamReplayMode          = "replayMode"
	ParamRecordMode          = "recordMode"
	ParamTargetApp           = "targetApp"
	ParamRestartApp          = "restartApp"
	ParamPath                = "path"
	ParamReplace             = "replace"
	ParamKey                 = "key"
	ParamValue               = "value"
	ParamMaxSteps            = "maxSteps"
	ParamMaxDurationMs       = "maxDurationMs"
	ParamIdleTimeoutMs       = "idleTimeoutMs"
	ParamMaxRepeatedActions  = "maxRepeatedActions"
	ParamMaxNoProgressSteps  = "maxNoProgressSteps"
	ParamItems               = "items"
	ParamID                  = "id"
	ParamConfirmID           = "confirmId"
	ParamLimit               = "limit"
	ParamPluginID            = "pluginId"
	ParamFileID              = "fileId"
	paramFileName            = "fileName"
	ParamSHA256              = "sha256"
	ParamVideoPath           = "videoPath"
	ParamActionOffsetMs      = "actionOffsetMs"
	ParamDifferenceThreshold = "differenceThreshold"
	ParamResolution          = "resolution"
	ParamBitrateKbps         = "bitrateKbps"
	ParamFrameRate           = "frameRate"
	ParamDurationSec         = "durationSec"
	ParamCPUCount            = "cpuCount"
	ParamCPUPercent          = "cpuPercent"
	ParamMemory              = "memory"
	ParamCaseDesc            = "caseDesc"
)

// Replay parameter values.
const (
	ReplayModeNormal = "normal"
)

// MsgReplayLeaseBusy is the error of the failed run SoloPi publishes when
// a replay start finds the device-control lease taken (an Agent session,
// another replay, plugin maintenance): the run never started
// (docs/device-protocol.md#replay).
const MsgReplayLeaseBusy = "Another replay or plugin maintenance prevents replay from starting"

// Agent session budget ranges and defaults enforced by the device.
var (
	AgentMaxSteps           = Range{Name: ParamMaxSteps, Min: 1, Max: 200, Default: 50}
	AgentMaxDurationMs      = Range{Name: ParamMaxDurationMs, Min: 1000, Max: 1800000, Default: 300000}
	AgentIdleTimeoutMs      = Range{Name: ParamIdleTimeoutMs, Min: 1000, Max: 300000, Default: 30000}
	AgentMaxRepeatedActions = Range{Name: ParamMaxRepeatedActions, Min: 1, Max: 20, Default: 3}
	AgentMaxNoProgressSteps = Range{Name: ParamMaxNoProgressSteps, Min: 1, Max: 20, Default: 3}
)

// Range is an inclusive integer bound with a default.
type Range struct {
	Name     string
	Min, Max int64
	Default  int64
}

// Contains reports whether v lies within the range.
func (r Range) Contains(v int64) bool { return v >= r.Min && v <= r.Max }

// Agent timing constants (docs/device-protocol.md#timings), in milliseconds
// of device time.
const (
	AgentSettlePollMs       = 250
	AgentSettleMaxMs        = 3000
	AgentRootPollMs         = 100
	AgentRootMaxMs          = 5000
	AgentRootStableMs       = 500
	AgentActionCompletionMs = 10000
	AgentWatchdogMs         = 1000
	ReplayAutoStartDelayMs  = 2000
	HTTPServerStartDelayMs  = 5000
)

// ValidPackageName reports whether s looks like an Android package name
// (the host's rule: [A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+).
func ValidPackageName(s string) bool {
	parts := 0
	seg := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if seg == 0 {
				return false
			}
			parts++
			seg = 0
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			seg++
		default:
			return false
		}
	}
	return seg > 0 && parts >= 1
}

// Selector values of the session resolvers (the `mode`, `recordMode` and
// `action` parameters of docs/device-protocol.md#session-types).
const (
	perfModeListItems = "listItems"
	perfModeStatus    = "status"
	perfModeCurrent   = "current"
	perfModeNormal    = "normal"
	perfModeDisplay   = "display"

	recordModeStatus = "status"
	recordModeNormal = "normal"
	recordModeStop   = "stop"

	sessionActionStatus = "status"
	sessionActionStart  = "start"
	sessionActionStop   = "stop"
	scanActionCancel    = "cancel"

	historyListReplay        = "listReplay"
	historyGetReplay         = "getReplay"
	historyListPerformance   = "listPerformance"
	historyGetPerformance    = "getPerformance"
	historyMutationStatus    = "mutationStatus"
	historyDeleteReplay      = "deleteReplay"
	historyDeletePerformance = "deletePerformance"

	pluginList           = "list"
	pluginMutationStatus = "mutationStatus"
	pluginImport         = "import"
	pluginInstallAlias   = "install"
	pluginRemove         = "remove"

	configActionList = "list"
	configActionGet  = "get"
	configActionSet  = "set"

	statusTypeStatus = "status"
	statusTypePage   = "page"
)
