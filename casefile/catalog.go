package casefile

import (
	"slices"
	"strings"
)

// PerformActionEnum categories (PerformActionEnum.CATEGORY_*).
const (
	categoryInvalid       = 0
	categoryNode          = 1
	categoryApp           = 2
	categoryDevice        = 3
	categoryControl       = 4
	categoryLocalReplay   = 6
	categoryInternal      = -2
	categoryCaseOperation = -3
)

// Authoring classes, as printed by the upstream `actions` command.
const (
	authoringCaseStep        = "case-step"
	authoringCaseOnly        = "case-only"
	authoringCaseContext     = "case-context"
	authoringDynamicProvider = "dynamic-provider"
	authoringRuntimeOnly     = "runtime-only"
)

// Plugins a provider action needs at replay time.
const (
	pluginScreenRecord = "hulu_screenRecord"
	pluginImageCompare = "hulu_imageCompare"
)

// ActionDescriptor describes one PerformActionEnum value. The JSON names
// and their order are those of solopi-ai's `actions` output; the last five
// (category, type, refused, refusedReason, params) are ours.
type ActionDescriptor struct {
	Code                string   `json:"code"`
	ActionEnum          string   `json:"actionEnum"`
	Authoring           string   `json:"authoring"`
	CaseOnly            bool     `json:"caseOnly"`
	Internal            bool     `json:"internal"`
	DynamicProvider     bool     `json:"dynamicProvider"`
	RuntimeOnly         bool     `json:"runtimeOnly"`
	RequiresCaseContext bool     `json:"requiresCaseContext"`
	SupportedInCaseStep bool     `json:"supportedInCaseStep"`
	AuthoringAllowed    bool     `json:"authoringAllowed"`
	HighRisk            bool     `json:"highRisk"`
	HighRiskReason      *string  `json:"highRiskReason"`
	RequiresHighRisk    bool     `json:"requiresHighRiskConfirmation"`
	RequiresNode        bool     `json:"requiresNode"`
	RequiredParams      []string `json:"requiredParams"`
	Category            int      `json:"category"`
	// Type: 0 base, 1 replay-only, 2 remote ("one device controls many") only.
	Type          int     `json:"type"`
	Refused       bool    `json:"refused"`
	RefusedReason *string `json:"refusedReason"`
	// Params lists every parameter the executor reads besides localClickPos.
	Params []string `json:"params"`
	// ParamValues gives, for a parameter that takes one of a closed set,
	// the values SoloPi's executor knows (solopi extension).
	ParamValues map[string][]string `json:"paramValues"`
}

// assertModes are the assertMode values SoloPi's ASSERT executors know:
// three comparisons of text and five of numbers.
var assertModes = []string{"assert_accurate", "assert_contain", "assert_regular",
	"assert_dayu", "assert_dayuAndEqual", "assert_equal", "assert_xiaoyu", "assert_xiaoyuAndEqual"}

// paramValues are the closed sets of the enums' parameters.
var paramValues = map[string]map[string][]string{
	"ASSERT":       {"assertMode": assertModes},
	"ASSERT_TOAST": {"assertMode": assertModes},
}

// ProviderDescriptor describes one dynamic ActionProvider action, carried
// in an OTHER_NODE / OTHER_GLOBAL step as operationParam.targetAction. The
// JSON names up to requiresPriorAction are solopi-ai's, in its order; the
// rest are ours.
type ProviderDescriptor struct {
	Code                       string   `json:"code"`
	TargetAction               string   `json:"targetAction"`
	ActionEnum                 string   `json:"actionEnum"`
	Authoring                  string   `json:"authoring"`
	CaseOnly                   bool     `json:"caseOnly"`
	Internal                   bool     `json:"internal"`
	DynamicProvider            bool     `json:"dynamicProvider"`
	RuntimeAvailabilityUnknown bool     `json:"runtimeAvailabilityUnknown"`
	SupportedInCaseStep        bool     `json:"supportedInCaseStep"`
	RequiresNode               bool     `json:"requiresNode"`
	RequiredParams             []string `json:"requiredParams"`
	OptionalParams             []string `json:"optionalParams"`
	// RequiresPriorAction names the start action a stop action pairs with.
	RequiresPriorAction string `json:"requiresPriorAction,omitempty"`
	Provider            string `json:"provider"`
	// PairedStop names the stop action a start action must be closed by.
	PairedStop string `json:"pairedStop,omitempty"`
	// Plugin is the SoloPi plugin that must be loaded at replay, or "".
	Plugin string `json:"plugin,omitempty"`
	// RefusedParams are accepted by the device but refused by the authoring
	// policy when non-empty (an upload url sends evidence off the device).
	// optionalParams still lists them, as solopi-ai does.
	RefusedParams []string `json:"refusedParams"`
}

// catalog is the case-authoring action catalogue in the shape of
// solopi-ai's `actions` output. It is built from the same tables the
// normaliser and the authoring policy read, so what it advertises is what
// case-validate, case-import, run and the step edits enforce.
type catalog struct {
	Counts          CatalogCounts        `json:"counts"`
	EnumActions     []ActionDescriptor   `json:"enumActions"`
	ProviderActions []ProviderDescriptor `json:"providerActions"`
}

// CatalogCounts is solopi-ai's counts object.
type CatalogCounts struct {
	EnumActions      int `json:"enumActions"`
	ProviderActions  int `json:"providerActions"`
	TotalDescriptors int `json:"totalDescriptors"`
}

// AuthoringCatalog returns the 66 enum and 6 provider descriptors with
// their counts.
func AuthoringCatalog() catalog {
	enums, providers := Actions(), ProviderActions()
	return catalog{
		Counts:          CatalogCounts{EnumActions: len(enums), ProviderActions: len(providers), TotalDescriptors: len(enums) + len(providers)},
		EnumActions:     enums,
		ProviderActions: providers,
	}
}

type actionRow struct {
	name, code string
	category   int
	typ        int
	params     []string
}

// actionTable is PerformActionEnum in declaration order (SoloPi v0.12.0 ==
// v1.0.2). Read-only.
var actionTable = [...]actionRow{
	{"CANCEL", "cancel", 0, 0, nil},
	{"CLICK", "click", 1, 0, nil},
	{"LONG_CLICK", "longClick", 1, 0, []string{"text"}},
	{"INPUT", "input", 1, 0, []string{"text"}},
	{"MULTI_CLICK", "multiClick", 1, 0, []string{"text"}},
	{"CLICK_IF_EXISTS", "clickIfExists", 1, 0, nil},
	{"CLICK_QUICK", "clickQuick", 1, 0, nil},
	{"CLICK_AND_INPUT", "clickAndInput", 1, 0, []string{"text"}},
	{"INPUT_SEARCH", "inputSearch", 1, 0, []string{"text"}},
	{"SCROLL_TO_BOTTOM", "scrollToBottom", 1, 0, []string{"text", "scrollDistance", "ScrollTime"}},
	{"SCROLL_TO_TOP", "scrollToTop", 1, 0, []string{"text", "scrollDistance", "ScrollTime"}},
	{"SCROLL_TO_RIGHT", "scrollToRight", 1, 0, []string{"text", "scrollDistance", "ScrollTime"}},
	{"SCROLL_TO_LEFT", "scrollToLeft", 1, 0, []string{"text", "scrollDistance", "ScrollTime"}},
	{"GESTURE", "gesture", 1, 0, []string{"gesturePath", "gestureFilter"}},
	{"ASSERT", "assert", 1, 0, []string{"assertMode", "assertInputContent"}},
	{"SLEEP_UNTIL", "sleepUntil", 1, 0, []string{"text"}},
	{"OTHER_NODE", "otherNode", 1, 0, []string{"targetAction", "targetActionDesc"}},
	{"BACK", "back", 2, 0, nil},
	{"RELOAD", "reload", 2, 0, nil},
	{"HANDLE_ALERT", "handleAlert", 2, 0, nil},
	{"JUMP_TO_PAGE", "jumpToPage", 2, 0, []string{"scheme"}},
	{"CHANGE_MODE", "changeMode", 4, 0, []string{"descriptorMode"}},
	{"GENERATE_QR_CODE", "generateQrCode", 2, 0, []string{"scheme"}},
	{"GENERATE_BAR_CODE", "generateBarCode", 2, 0, []string{"scheme", "codeType"}},
	{"GLOBAL_SCROLL_TO_BOTTOM", "globalScrollToBottom", 2, 0, nil},
	{"GLOBAL_SCROLL_TO_TOP", "globalScrollToTop", 2, 0, nil},
	{"GLOBAL_SCROLL_TO_RIGHT", "globalScrollToRight", 2, 0, nil},
	{"GLOBAL_SCROLL_TO_LEFT", "globalScrollToLeft", 2, 0, nil},
	{"KEYBOARD_INPUT", "keyboardInput", 2, 0, []string{"text"}},
	{"INPUT_GLOBAL", "inputGlobal", 3, 0, []string{"text"}},
	{"GLOBAL_PINCH_OUT", "globalPinchOut", 2, 0, nil},
	{"GLOBAL_PINCH_IN", "globalPinchIn", 2, 0, nil},
	{"GLOBAL_GESTURE", "globalGesture", 2, 0, []string{"gesturePath", "gestureFilter"}},
	{"GOTO_INDEX", "goToIndex", 2, 0, nil},
	{"CLEAR_DATA", "clearData", 2, 0, nil},
	{"ASSERT_TOAST", "assertToast", 2, 0, []string{"assertMode", "assertInputContent"}},
	{"KILL_PROCESS", "killProcess", 2, 0, nil},
	{"SLEEP", "sleep", 2, 0, []string{"text"}},
	{"SCREENSHOT", "screenshot", 3, 0, []string{"text"}},
	{"HOME", "home", 3, 0, nil},
	{"NOTIFICATION", "notification", 3, 0, nil},
	{"RECENT_TASK", "recentTask", 3, 0, nil},
	{"DEVICE_INFO", "deviceInfo", 3, 2, nil},
	{"EXECUTE_SHELL", "executeShell", 2, 0, []string{"text"}},
	{"PAUSE", "pause", 3, 2, nil},
	{"RESUME", "resume", 3, 2, nil},
	{"OTHER_GLOBAL", "otherGlobal", 3, 0, []string{"targetAction", "targetActionDesc"}},
	{"FINISH", "finish", 4, 0, nil},
	{"FOCUS", "focus", 0, 0, nil},
	{"LET_NODE", "letNode", 1, 1, []string{"allocType", "allocKey", "allocValue"}},
	{"LET", "let", 4, 1, []string{"allocType", "allocKey", "allocValue"}},
	{"LOAD_PARAM", "load", 4, 1, []string{"appUrl"}},
	{"CHECK_NODE", "checkNode", 1, 1, []string{"check"}},
	{"CHECK", "check", 4, 1, []string{"check"}},
	{"FORCE_STOP", "forceStop", 6, 2, nil},
	{"NORMAL_EXIT", "slaveExit", 6, 2, nil},
	{"HANDLE_PERMISSION_ALERT", "permissionAlert", -2, 0, nil},
	{"HIDE_INPUT_METHOD", "inputMethod", -2, 0, nil},
	{"DELETE_CASE", "deleteCase", -3, 0, nil},
	{"EXPORT_CASE", "exportCase", -3, 0, nil},
	{"PLAY_MULTI_TIMES", "playMultiTimes", -3, 0, nil},
	{"GEN_MULTI_PARAM", "genMultiParam", -3, 0, nil},
	{"WHILE", "while", -2, 1, []string{"check", "scope"}},
	{"IF", "if", -2, 1, []string{"check", "scope"}},
	{"CONTINUE", "continue", -2, 1, nil},
	{"BREAK", "break", -2, 1, nil},
}

// requiredParams are the params the upstream host insists on per enum (the
// keys the Java executors read without a fallback).
var requiredParams = map[string][]string{
	"INPUT": {"text"}, "CLICK_AND_INPUT": {"text"}, "INPUT_SEARCH": {"text"},
	"LONG_CLICK": {"text"}, "MULTI_CLICK": {"text"}, "SLEEP_UNTIL": {"text"},
	"SCROLL_TO_BOTTOM": {"text"}, "SCROLL_TO_TOP": {"text"}, "SCROLL_TO_RIGHT": {"text"},
	"SCROLL_TO_LEFT": {"text"}, "SLEEP": {"text"}, "SCREENSHOT": {"text"},
	"JUMP_TO_PAGE": {"scheme"}, "GENERATE_QR_CODE": {"scheme"}, "GENERATE_BAR_CODE": {"scheme"},
	"KEYBOARD_INPUT": {"text"}, "INPUT_GLOBAL": {"text"}, "EXECUTE_SHELL": {"text"},
	"ASSERT": {"assertInputContent", "assertMode"}, "ASSERT_TOAST": {"assertInputContent", "assertMode"},
	"GESTURE": {"gestureFilter", "gesturePath"}, "GLOBAL_GESTURE": {"gestureFilter", "gesturePath"},
	"LET_NODE": {"allocKey", "allocType", "allocValue"}, "LET": {"allocKey", "allocType", "allocValue"},
	"LOAD_PARAM": {"appUrl"}, "CHANGE_MODE": {"descriptorMode"},
	"CHECK_NODE": {"check"}, "CHECK": {"check"}, "IF": {"check"}, "WHILE": {"check"},
	"OTHER_NODE": {"targetAction"}, "OTHER_GLOBAL": {"targetAction"},
}

// runtimeOnly enums are UI/remote-control signals, never case steps.
var runtimeOnly = map[string]bool{
	"CANCEL": true, "FOCUS": true, "FINISH": true, "PAUSE": true,
	"RESUME": true, "FORCE_STOP": true, "NORMAL_EXIT": true,
}

// refusedReasons: actions that may be listed but never authored, imported
// or replayed through this tool.
var refusedReasons = map[string]string{
	"EXECUTE_SHELL":           "arbitrary shell steps are view-only",
	"HANDLE_PERMISSION_ALERT": "an internal runtime action that may auto-accept system permission dialogs",
	"HIDE_INPUT_METHOD":       "an internal runtime action",
}

// highRiskReasons: actions that need explicit confirmation at every stage.
// EXECUTE_SHELL is listed too (as upstream does), but it is refused before
// confirmation is ever considered.
var highRiskReasons = map[string]string{
	"CLEAR_DATA":    "clears the target app's data",
	"KILL_PROCESS":  "stops the target app's process",
	"JUMP_TO_PAGE":  "opens a deep link or an external page",
	"EXECUTE_SHELL": "arbitrary shell steps are view-only and must not be added or copied",
}

// internalEnums need case context (loops, conditions) or are SoloPi-internal.
var internalEnums = map[string]bool{
	"HANDLE_PERMISSION_ALERT": true, "HIDE_INPUT_METHOD": true,
	"WHILE": true, "IF": true, "CONTINUE": true, "BREAK": true,
}

// refusedProviderParams are refused on every provider step: an upload url
// would send performance data or a screen recording off the device, which
// the user must set up in the app, not a case file.
var refusedProviderParams = []string{"url"}

var providerTable = [...]ProviderDescriptor{
	{Code: "clickByScreenshot", ActionEnum: "OTHER_NODE", Provider: "ImageCompareActionProvider", RequiresNode: true,
		RequiredParams: []string{"targetAction", "targetImage"}, OptionalParams: []string{"originSize", "originPos"}, Plugin: pluginImageCompare},
	{Code: "assertScreenshot", ActionEnum: "OTHER_NODE", Provider: "ImageCompareActionProvider", RequiresNode: true,
		RequiredParams: []string{"targetAction", "targetImage"}, OptionalParams: []string{"originSize", "originPos"}, Plugin: pluginImageCompare},
	{Code: "startRecord", ActionEnum: "OTHER_GLOBAL", Provider: "PerformanceActionProvider",
		RequiredParams: []string{"checkList", "targetAction"}, OptionalParams: []string{"url"}, PairedStop: "stopRecord"},
	{Code: "stopRecord", ActionEnum: "OTHER_GLOBAL", Provider: "PerformanceActionProvider",
		RequiredParams: []string{"targetAction"}, OptionalParams: []string{}, RequiresPriorAction: "startRecord"},
	{Code: "startRecordScreen", ActionEnum: "OTHER_GLOBAL", Provider: "RecordScreenActionProvider",
		RequiredParams: []string{"INTENT_EXCEPT_DIFF", "INTENT_FRAME_RATE", "INTENT_VIDEO_BITRATE", "resolution", "targetAction"},
		OptionalParams: []string{"url", "title"}, PairedStop: "stopRecordScreen", Plugin: pluginScreenRecord},
	{Code: "stopRecordScreen", ActionEnum: "OTHER_GLOBAL", Provider: "RecordScreenActionProvider",
		RequiredParams: []string{"targetAction"}, OptionalParams: []string{}, RequiresPriorAction: "startRecordScreen", Plugin: pluginScreenRecord},
}

func describe(r actionRow) ActionDescriptor {
	d := ActionDescriptor{
		Code: r.code, ActionEnum: r.name, Category: r.category, Type: r.typ,
		CaseOnly:        r.category == categoryCaseOperation,
		Internal:        internalEnums[r.name],
		DynamicProvider: r.name == "OTHER_NODE" || r.name == "OTHER_GLOBAL",
		RuntimeOnly:     runtimeOnly[r.name],
		RequiresNode:    r.category == categoryNode,
		RequiredParams:  slices.Clone(requiredParams[r.name]),
		Params:          slices.Clone(r.params),
		ParamValues:     map[string][]string{},
	}
	for k, v := range paramValues[r.name] {
		d.ParamValues[k] = slices.Clone(v)
	}
	if d.RequiredParams == nil {
		d.RequiredParams = []string{}
	}
	if d.Params == nil {
		d.Params = []string{}
	}
	d.RequiresCaseContext = d.Internal
	switch {
	case d.CaseOnly:
		d.Authoring = authoringCaseOnly
	case d.Internal:
		d.Authoring = authoringCaseContext
	case d.DynamicProvider:
		d.Authoring = authoringDynamicProvider
	case d.RuntimeOnly:
		d.Authoring = authoringRuntimeOnly
	default:
		d.Authoring = authoringCaseStep
	}
	d.SupportedInCaseStep = !d.CaseOnly && !d.RuntimeOnly
	if reason, ok := refusedReasons[r.name]; ok {
		d.Refused = true
		d.RefusedReason = Str(reason)
	}
	d.AuthoringAllowed = d.SupportedInCaseStep && !d.Refused
	if reason, ok := highRiskReasons[r.name]; ok {
		d.HighRisk = true
		d.RequiresHighRisk = true
		d.HighRiskReason = Str(reason)
	}
	return d
}

// Actions returns the 66 PerformActionEnum descriptors in SoloPi's
// declaration order, except that the four case-list menu items come last,
// as solopi-ai lists them. The slice is freshly built, so callers may
// modify it.
func Actions() []ActionDescriptor {
	out := make([]ActionDescriptor, 0, len(actionTable))
	for _, caseOnly := range []bool{false, true} {
		for _, r := range actionTable {
			if (r.category == categoryCaseOperation) == caseOnly {
				out = append(out, describe(r))
			}
		}
	}
	return out
}

// ProviderActions returns the 6 built-in provider actions.
func ProviderActions() []ProviderDescriptor {
	out := make([]ProviderDescriptor, len(providerTable))
	for i, p := range providerTable {
		p.TargetAction = p.Code
		p.Authoring = authoringDynamicProvider
		p.DynamicProvider = true
		p.RuntimeAvailabilityUnknown = true
		p.SupportedInCaseStep = true
		p.RequiredParams = slices.Clone(p.RequiredParams)
		p.OptionalParams = slices.Clone(p.OptionalParams)
		p.RefusedParams = slices.Clone(refusedProviderParams)
		out[i] = p
	}
	return out
}

// lookupAction finds an enum by NAME ("LONG_CLICK"), by code ("longClick",
// including the irregular goToIndex, load, slaveExit, permissionAlert and
// inputMethod), case-insensitively. Provider codes are not enums; use
// LookupProvider for those.
func lookupAction(name string) (ActionDescriptor, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return ActionDescriptor{}, false
	}
	// Exact matches first, so the common case never depends on folding.
	for _, r := range actionTable {
		if r.name == name || r.code == name {
			return describe(r), true
		}
	}
	for _, r := range actionTable {
		if strings.EqualFold(r.name, name) || strings.EqualFold(r.code, name) {
			return describe(r), true
		}
	}
	return ActionDescriptor{}, false
}

// lookupProvider finds a provider action by its targetAction code,
// case-insensitively.
func lookupProvider(code string) (ProviderDescriptor, bool) {
	code = strings.TrimSpace(code)
	for _, p := range ProviderActions() {
		if p.Code == code {
			return p, true
		}
	}
	for _, p := range ProviderActions() {
		if strings.EqualFold(p.Code, code) {
			return p, true
		}
	}
	return ProviderDescriptor{}, false
}

// enumByDeviceName is the device's view: fastjson 1.2 resolves an enum by
// its exact name, or by the name with ASCII A-Z lowered (it registers both
// hashes), never by code. An empty string reads as null.
func enumByDeviceName(name string) (actionRow, bool) {
	if name == "" {
		return actionRow{}, false
	}
	lower := asciiLower(name)
	for _, r := range actionTable {
		if r.name == name || asciiLower(r.name) == lower {
			return r, true
		}
	}
	return actionRow{}, false
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
