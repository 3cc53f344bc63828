package fault

// Every errorCode the host produces, declared once. docs/error-codes.md
// documents each (internal/docscheck holds it to that). The simulator's
// codes are the device's and live in protocol.
const (
	CodeAckTimeout                   = "ack_timeout"
	CodeActionNotAllowed             = "action_not_allowed"
	CodeAdbConnectPreconditionFailed = "adb_connect_precondition_failed"
	CodeAdbConnectReceiptInvalid     = "adb_connect_receipt_invalid"
	CodeAdbConnectReceiptMismatch    = "adb_connect_receipt_mismatch"
	CodeAdbConnectTimeout            = "adb_connect_timeout"
	CodeAdbError                     = "adb_error"
	// CodeAdbKeyboardMissing is the preflight's finding that the ADB
	// Keyboard is not installed (Failed: exit 2, with how to install it).
	CodeAdbKeyboardMissing = "adb_keyboard_missing"
	// CodeAdbKeyboardUnavailable: the ADB Keyboard cannot be listed, enabled,
	// selected or restored.
	CodeAdbKeyboardUnavailable = "adb_keyboard_unavailable"
	CodeAdbNotFound            = "adb_not_found"
	CodeAdbServerUnreachable   = "adb_server_unreachable"
	CodeAdbTimeout             = "adb_timeout"
	CodeAgentActionTimeout     = "agent_action_timeout"
	CodeAgentControlTimeout    = "agent_control_timeout"
	CodeAgentStartTimeout      = "agent_start_timeout"
	// 124
	CodeAnalysisTimeout = "analysis_timeout"
	// CodeAPILevelUnreadable: getprop ro.build.version.sdk printed no
	// integer (a transport failure, as solopi-ai).
	CodeAPILevelUnreadable   = "api_level_unreadable"
	CodeAppStatusUnavailable = "app_status_unavailable"
	// 4: the pulled file is not what the device reported
	CodeArtifactMismatch = "artifact_mismatch"
	// 4: the reported file is not on the device
	CodeArtifactMissing           = "artifact_missing"
	CodeArtifactWriteFailed       = "artifact_write_failed"
	CodeArtifactsDirNotEmpty      = "artifacts_dir_not_empty"
	CodeArtifactsExist            = "artifacts_exist"
	CodeArtifactsIOFailed         = "artifacts_io_failed"
	CodeAutoStartNotConfirmed     = "auto_start_not_confirmed"
	CodeBatchFailed               = "batch_failed"
	CodeBatchFlaky                = "batch_flaky"
	CodeBatchInfrastructureFailed = "batch_infrastructure_failed"
	CodeBatchInterrupted          = "batch_interrupted"
	CodeBatchRunTimeout           = "batch_run_timeout"
	CodeCancelTimeout             = "cancel_timeout"
	CodeCaseChanged               = "case_changed"
	// CodeCaseDirUnreadable: a --dir cannot be walked.
	CodeCaseDirUnreadable  = "case_dir_unreadable"
	CodeCaseFileUnreadable = "case_file_unreadable"
	// CodeCaseNameConflict: a phone holds another case under a case
	// file's name; nothing ran (exit 2).
	CodeCaseNameConflict            = "case_name_conflict"
	CodeCaseNameMismatch            = "case_name_mismatch"
	CodeCaseSchemaViolation         = "case_schema_violation"
	CodeCaseSnapshotUnbound         = "case_snapshot_unbound"
	CodeCasesFileUnreadable         = "cases_file_unreadable"
	CodeCloudUnavailable            = "cloud_unavailable"
	CodeCompiledCaseInvalid         = "compiled_case_invalid"
	CodeCompiledCaseMismatch        = "compiled_case_mismatch"
	CodeConfigNotConfirmed          = "config_not_confirmed"
	CodeConfigSpecMismatch          = "config_spec_mismatch"
	CodeConflictingOptions          = "conflicting_options"
	CodeConsoleListenFailed         = "console_listen_failed"
	CodeControlServiceNotReady      = "control_service_not_ready"
	CodeControlServiceUnreachable   = "control_service_unreachable"
	CodeCoordinateCalibrationFailed = "coordinate_calibration_failed"
	CodeCoordinateOutOfRange        = "coordinate_out_of_range"
	CodeCPUCountUnknown             = "cpu_count_unknown"
	// CodeCrossSiteRequest: a browser sent the request from another origin.
	CodeCrossSiteRequest    = "cross_site_request"
	CodeDatabaseAuthFailed  = "database_auth_failed"
	CodeDatabaseCorrupt     = "database_corrupt"
	CodeDatabaseError       = "database_error"
	CodeDatabaseFull        = "database_full"
	CodeDatabaseIsDirectory = "database_is_directory"
	CodeDatabaseLocked      = "database_locked"
	// Opening a store.
	CodeDatabaseNotFound         = "database_not_found"
	CodeDatabaseNotInitialized   = "database_not_initialized"
	CodeDatabasePermissionDenied = "database_permission_denied"
	CodeDatabaseReadOnly         = "database_read_only"
	CodeDatabaseSchemaNotFound   = "database_schema_not_found"
	CodeDatabaseUnreachable      = "database_unreachable"
	CodeDeleteTimeout            = "delete_timeout"
	CodeDemoFailed               = "demo_failed"
	CodeDemoSetupFailed          = "demo_setup_failed"
	CodeDependencyCycle          = "dependency_cycle"
	// CodeDeviceBusy: another live process holds the phone (exit 2).
	CodeDeviceBusy         = "device_busy"
	CodeDeviceDisconnected = "device_disconnected"
	// CodeDeviceLockFailed: the lock file cannot be created or locked (exit 3).
	CodeDeviceLockFailed              = "device_lock_failed"
	CodeDeviceNotFound                = "device_not_found"
	CodeDeviceNotReady                = "device_not_ready"
	CodeDeviceOffline                 = "device_offline"
	CodeDeviceRejected                = "device_rejected"
	CodeDeviceUnauthorized            = "device_unauthorized"
	CodeDoctorNotReadyAfterAdbConnect = "doctor_not_ready_after_adb_connect"
	CodeDuplicateAction               = "duplicate_action"
	// CodeDuplicateCaseName: two items of the suite have one case name (exit 3).
	CodeDuplicateCaseName = "duplicate_case_name"
	CodeDuplicateID       = "duplicate_id"
	// an object key given twice (details: key, jsonPath)
	CodeDuplicateKey      = "duplicate_key"
	CodeDuplicateKeyword  = "duplicate_keyword"
	CodeDuplicateStepID   = "duplicate_step_id"
	CodeDynamicExpression = "dynamic_expression"
	// Checks solopi-ai does not make (a re-fingerprinted plan it accepts
	// would only fail at run time).
	CodeDynamicSegmentOutsideTest = "dynamic_segment_outside_test"
	CodeEmptyOutput               = "empty_output"
	CodeEmptyResults              = "empty_results"
	CodeEncodingFailed            = "encoding_failed"
	CodeEvidenceUnreadable        = "evidence_unreadable"
	CodeFieldTooLong              = "field_too_long"
	CodeFileUnreadable            = "file_unreadable"
	CodeFingerprintMismatch       = "fingerprint_mismatch"
	// CodeForeignHost: the Host header names something other than the
	// loopback address the server listens on (DNS rebinding).
	CodeForeignHost         = "foreign_host"
	CodeGoalTreeMismatch    = "goal_tree_mismatch"
	CodeHealthUnavailable   = "health_unavailable"
	CodeHighRiskUnconfirmed = "high_risk_unconfirmed"
	// CodeHistoryCorrupt: not a SQLite database, or a damaged one.
	CodeHistoryCorrupt = "history_corrupt"
	// 124
	CodeHistoryDeleteTimeout = "history_delete_timeout"
	// CodeHistoryError: any other database failure.
	CodeHistoryError = "history_error"
	// CodeHistoryInvalidPath: the path is a directory, or there is no data
	// directory for the default path.
	CodeHistoryInvalidPath = "history_invalid_path"
	// CodeHistoryInvalidRecord: an attempt row that breaks the store's rules.
	CodeHistoryInvalidRecord = "history_invalid_record"
	// CodeHistoryLocked: another process held the database past the busy timeout.
	CodeHistoryLocked = "history_locked"
	// CodeHistoryNeedsMigration: a reader found an older schema, which only a
	// writer migrates.
	CodeHistoryNeedsMigration = "history_needs_migration"
	// CodeHistoryNotFound: a reader was pointed at a file that does not exist.
	CodeHistoryNotFound = "history_not_found"
	// CodeHistoryNotOurs: a SQLite database of another application.
	CodeHistoryNotOurs = "history_not_ours"
	// CodeHistoryReadOnly: the file or its directory cannot be written (a
	// read-only file system, permissions).
	CodeHistoryReadOnly = "history_read_only"
	// CodeHistorySchemaNewer: written by a newer solopi (its schema version is
	// higher than this one knows).
	CodeHistorySchemaNewer    = "history_schema_newer"
	CodeIdempotencyConflict   = "idempotency_conflict"
	CodeImportPathUnavailable = "import_path_unavailable"
	CodeImportStagingFailed   = "import_staging_failed"
	CodeImportTimeout         = "import_timeout"
	CodeIncompleteCall        = "incomplete_call"
	CodeInputFailed           = "input_failed"
	CodeInputInvalidUTF8      = "input_invalid_utf8"
	CodeInputNotRegular       = "input_not_regular"
	CodeInputTooLarge         = "input_too_large"
	CodeInputUnreadable       = "input_unreadable"
	// CodeInspectorListenFailed: inspect --serve cannot listen on 127.0.0.1.
	CodeInspectorListenFailed  = "inspector_listen_failed"
	CodeInternalError          = "internal_error"
	CodeInterrupted            = "interrupted"
	CodeInvalidAction          = "invalid_action"
	CodeInvalidAdvanceSettings = "invalid_advance_settings"
	CodeInvalidBearerToken     = "invalid_bearer_token"
	CodeInvalidBinding         = "invalid_binding"
	CodeInvalidBudget          = "invalid_budget"
	// Host normalisation and validation.
	CodeInvalidCase = "invalid_case"
	// Parse.
	CodeInvalidCaseJSON       = "invalid_case_json"
	CodeInvalidCleanup        = "invalid_cleanup"
	CodeInvalidContract       = "invalid_contract"
	CodeInvalidCSV            = "invalid_csv"
	CodeInvalidDecision       = "invalid_decision"
	CodeInvalidDecisions      = "invalid_decisions"
	CodeInvalidDeviceResponse = "invalid_device_response"
	CodeInvalidDevices        = "invalid_devices"
	CodeInvalidEvidence       = "invalid_evidence"
	CodeInvalidExecutionOrder = "invalid_execution_order"
	// a known field has the wrong JSON type
	CodeInvalidField       = "invalid_field"
	CodeInvalidFingerprint = "invalid_fingerprint"
	CodeInvalidFlowUse     = "invalid_flow_use"
	CodeInvalidHealth      = "invalid_health"
	// 3
	CodeInvalidHistoryID = "invalid_history_id"
	CodeInvalidID        = "invalid_id"
	CodeInvalidInput     = "invalid_input"
	CodeInvalidJSON      = "invalid_json"
	CodeInvalidLabel     = "invalid_label"
	// 3
	CodeInvalidLimit          = "invalid_limit"
	CodeInvalidLiteral        = "invalid_literal"
	CodeInvalidMatrix         = "invalid_matrix"
	CodeInvalidOperationIndex = "invalid_operation_index"
	// operationLog is neither an object nor an encoded object
	CodeInvalidOperationLog = "invalid_operation_log"
	// invalid
	CodeInvalidOption     = "invalid_option"
	CodeInvalidOracle     = "invalid_oracle"
	CodeInvalidOutputPath = "invalid_output_path"
	CodeInvalidOwnerToken = "invalid_owner_token"
	CodeInvalidParameter  = "invalid_parameter"
	// CodeInvalidPerfBudget: a --perf-budget that does not parse (exit 3).
	CodeInvalidPerfBudget = "invalid_perf_budget"
	CodeInvalidPlan       = "invalid_plan"
	// 3
	CodeInvalidPluginFile = "invalid_plugin_file"
	// 3
	CodeInvalidPluginID        = "invalid_plugin_id"
	CodeInvalidPort            = "invalid_port"
	CodeInvalidPriority        = "invalid_priority"
	CodeInvalidProviderOptions = "invalid_provider_options"
	CodeInvalidProviderParams  = "invalid_provider_params"
	CodeInvalidReplayStatus    = "invalid_replay_status"
	CodeInvalidReport          = "invalid_report"
	CodeInvalidRequest         = "invalid_request"
	// 3
	CodeInvalidRequestID     = "invalid_request_id"
	CodeInvalidResult        = "invalid_result"
	CodeInvalidRoute         = "invalid_route"
	CodeInvalidRunningParams = "invalid_running_params"
	CodeInvalidSelector      = "invalid_selector"
	// invalid
	CodeInvalidSessionID = "invalid_session_id"
	// a step, method, node or param has the wrong shape
	CodeInvalidStep = "invalid_step"
	// bytes that are not UTF-8, or a \u escape of a lone surrogate
	CodeInvalidUTF8  = "invalid_utf8"
	CodeInvalidValue = "invalid_value"
	// 3
	CodeInvalidVideoPath     = "invalid_video_path"
	CodeInvalidWaitDuration  = "invalid_wait_duration"
	CodeJSONWrapped          = "json_wrapped"
	CodeLastStep             = "last_step"
	CodeLaunchFailed         = "launch_failed"
	CodeLaunchTimeout        = "launch_timeout"
	CodeLauncherNotResolved  = "launcher_not_resolved"
	CodeLeadingOutput        = "leading_output"
	CodeLeaseConflict        = "lease_conflict"
	CodeListenFailed         = "listen_failed"
	CodeMalformedEnvelope    = "malformed_envelope"
	CodeMarkdownWrapped      = "markdown_wrapped"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeMissingAction        = "missing_action"
	CodeMissingCaseName      = "missing_case_name"
	CodeMissingField         = "missing_field"
	CodeMissingNode          = "missing_node"
	CodeMissingOption        = "missing_option"
	CodeMissingOwnerToken    = "missing_owner_token"
	CodeMissingParams        = "missing_params"
	CodeMissingSelector      = "missing_selector"
	CodeMissingSteps         = "missing_steps"
	CodeMissingTargetPackage = "missing_target_package"
	CodeModelAuthFailed      = "model_auth_failed"
	CodeModelConfigInvalid   = "model_config_invalid"
	CodeModelEmptyChoice     = "model_empty_choice"
	CodeModelHTTPError       = "model_http_error"
	CodeModelRejectsImages   = "model_rejects_images"
	// CodeModelRequestFailed: the request could not be built or encoded.
	CodeModelRequestFailed   = "model_request_failed"
	CodeModelResponseInvalid = "model_response_invalid"
	CodeModelTimeout         = "model_timeout"
	// CodeModelUnreachable: no HTTP answer at all (connection refused,
	// DNS, TLS, reset), after the configured retries.
	CodeModelUnreachable   = "model_unreachable"
	CodeMultipleCalls      = "multiple_calls"
	CodeMultipleDevices    = "multiple_devices"
	CodeNewSessionRequired = "new_session_required"
	CodeNoCases            = "no_cases"
	CodeNoCSVFiles         = "no_csv_files"
	CodeNoDevice           = "no_device"
	// CodeNoDevices: the suite names no phone (exit 3).
	CodeNoDevices     = "no_devices"
	CodeNoNodeAtPoint = "no_node_at_point"
	// CodeNoPhoneLeft: a case could not run because no usable phone was
	// left that could take it (a case's reason; exit 4).
	CodeNoPhoneLeft = "no_phone_left"
	CodeNoRun       = "no_run"
	CodeNoTextField = "no_text_field"
	// CodeNotSupported answers a solopi-ai command this tool does not
	// implement (model-*), so that a script calling it fails with a clear
	// reason.
	CodeNotSupported = "not_supported"
	// CodeNoUsableDevice: every phone was left out (exit 2; devices[]
	// says why).
	CodeNoUsableDevice      = "no_usable_device"
	CodeNonFiniteCoordinate = "non_finite_coordinate"
	CodeNotADirectory       = "not_a_directory"
	CodeNotFound            = "not_found"
	// CodeNotRecording: the inspector page asked to record without --record-to.
	CodeNotRecording         = "not_recording"
	CodeObservationInvalid   = "observation_invalid"
	CodeObservationNotFound  = "observation_not_found"
	CodeOrphanReplayActive   = "orphan_replay_active"
	CodeOutputEncodingFailed = "output_encoding_failed"
	CodeOutputExists         = "output_exists"
	CodeOutputFailed         = "output_failed"
	CodeOutputIsSource       = "output_is_source"
	// CodeOutputNotWritable: the location exists (or would be created) where
	// this process cannot create files (permissions, a read-only file
	// system), found before any device work.
	CodeOutputNotWritable    = "output_not_writable"
	CodeOutputWriteFailed    = "output_write_failed"
	CodeOwnerMismatch        = "owner_mismatch"
	CodeOwnerTokenInEvidence = "owner_token_in_evidence"
	CodeOwnershipConflict    = "ownership_conflict"
	CodePageUnavailable      = "page_unavailable"
	CodePerfAnalysisMissing  = "perf_analysis_missing"
	// CodePerfBudgetExceeded: a run's --perf-budget was exceeded (a product
	// failure, exit 2); CodePerfNotMeasured: a budgeted metric was not
	// measured (not_tested, exit 4).
	CodePerfBudgetExceeded = "perf_budget_exceeded"
	CodePerfNotMeasured    = "perf_not_measured"
	// CodePhoneBusy: a replay keeps running on a phone that is not ours
	// (a retirement reason).
	CodePhoneBusy = "phone_busy"
	// CodePhoneDropped: a phone stopped answering mid-suite and was
	// retired (a retirement reason).
	CodePhoneDropped = "phone_dropped"
	// CodePhoneUnhealthy: a phone failed several attempts in a row for
	// infrastructure reasons (a retirement reason).
	CodePhoneUnhealthy = "phone_unhealthy"
	// 4
	CodePluginCleanupFailed = "plugin_cleanup_failed"
	// 124
	CodePluginMutationTimeout     = "plugin_mutation_timeout"
	CodePluginsUnavailable        = "plugins_unavailable"
	CodePositionalArgument        = "positional_argument"
	CodeProtocolContractViolation = "protocol_contract_violation"
	CodeProtocolVersionMismatch   = "protocol_version_mismatch"
	CodeProviderConflict          = "provider_conflict"
	CodeProviderNotSupported      = "provider_not_supported"
	CodeProviderPairing           = "provider_pairing"
	CodePurgeFailed               = "purge_failed"
	CodeReceiptMismatch           = "receipt_mismatch"
	CodeRedactedValue             = "redacted_value"
	CodeRefusedAction             = "refused_action"
	CodeRefusedProviderURL        = "refused_provider_url"
	CodeRemoteFileNotFound        = "remote_file_not_found"
	CodeReplayActive              = "replay_active"
	CodeReplayCancelled           = "replay_cancelled"
	CodeReplayFailed              = "replay_failed"
	CodeReportUnreadable          = "report_unreadable"
	CodeReportWriteFailed         = "report_write_failed"
	CodeRiverUIFailed             = "riverui_failed"
	CodeRouteMismatch             = "route_mismatch"
	CodeRunFinishedBeforeCancel   = "run_finished_before_cancel"
	CodeRunIDMismatch             = "run_id_mismatch"
	CodeRunIdentityMismatch       = "run_identity_mismatch"
	CodeRunLost                   = "run_lost"
	CodeRunNotActive              = "run_not_active"
	CodeRunNotTerminal            = "run_not_terminal"
	CodeRunReplaced               = "run_replaced"
	CodeRunTimeout                = "run_timeout"
	CodeRuntimeError              = "runtime_error"
	CodeRuntimeOnlyAction         = "runtime_only_action"
	CodeSchemeCommandFailed       = "scheme_command_failed"
	CodeScreencapFailed           = "screencap_failed"
	CodeScreenshotFailed          = "screenshot_failed"
	CodeScreenshotUnavailable     = "screenshot_unavailable"
	CodeSegmentIDMismatch         = "segment_id_mismatch"
	CodeSelectorAmbiguous         = "selector_ambiguous"
	CodeSelectorNoMatch           = "selector_no_match"
	CodeSensitiveValueExposed     = "sensitive_value_exposed"
	CodeSerialConflict            = "serial_conflict"
	CodeServeFailed               = "serve_failed"
	// failed: another session is active, nothing was started
	CodeSessionActive = "session_active"
	// failed: our session ended in failed
	CodeSessionFailed = "session_failed"
	// failed: our session vanished (app restart)
	CodeSessionLost = "session_lost"
	// failed: the device's session is not ours
	CodeSessionMismatch = "session_mismatch"
	// failed: terminal, but not the state the command wanted
	CodeSessionNotStopped = "session_not_stopped"
	// failed: another client's session took over
	CodeSessionReplaced = "session_replaced"
	// timeout
	CodeSessionStartTimeout = "session_start_timeout"
	// timeout
	CodeSessionStopTimeout = "session_stop_timeout"
	CodeSessionTerminal    = "session_terminal"
	// CodeShardsNotPassed: a worker loop ended with shards that did not pass
	// (exit 2).
	CodeShardsNotPassed          = "shards_not_passed"
	CodeSimStartFailed           = "sim_start_failed"
	CodeSolopiLaunchFailed       = "solopi_launch_failed"
	CodeSolopiNotInstalled       = "solopi_not_installed"
	CodeSolopiNotReady           = "solopi_not_ready"
	CodeSolopiVersionUnsupported = "solopi_version_unsupported"
	CodeSpecialTokenWrapped      = "special_token_wrapped"
	// 4
	CodeStagedFileMissing = "staged_file_missing"
	// 4
	CodeStagedNameTaken      = "staged_name_taken"
	CodeStagingCleanupFailed = "staging_cleanup_failed"
	CodeStaleAssignment      = "stale_assignment"
	CodeStartupOutputInvalid = "startup_output_invalid"
	CodeStepIDConflict       = "step_id_conflict"
	CodeStepIndexOutOfRange  = "step_index_out_of_range"
	// failed: cleanup still incomplete after 3 re-sent stops
	CodeStopRetryLimit         = "stop_retry_limit"
	CodeSwipeAxisAmbiguous     = "swipe_axis_ambiguous"
	CodeSwipeDirectionConflict = "swipe_direction_conflict"
	CodeTargetAppLaunchFailed  = "target_app_launch_failed"
	CodeTaskCancelled          = "task_cancelled"
	// CodeTaskFailed, CodeTaskNotTested, CodeTaskNotTerminal and
	// CodeTaskWaitTimeout: managed-report's task that did not pass (its exit
	// is its verdict's) and its wait that ran out.
	CodeTaskFailed                   = "task_failed"
	CodeTaskNotFound                 = "task_not_found"
	CodeTaskNotTerminal              = "task_not_terminal"
	CodeTaskNotTested                = "task_not_tested"
	CodeTaskWaitTimeout              = "task_wait_timeout"
	CodeTimeout                      = "timeout"
	CodeTrailingOutput               = "trailing_output"
	CodeTransferDigestMismatch       = "transfer_digest_mismatch"
	CodeUIConfirmationRequired       = "ui_confirmation_required"
	CodeUnanchoredMatches            = "unanchored_matches"
	CodeUnauthorized                 = "unauthorized"
	CodeUncoveredAcceptanceCriterion = "uncovered_acceptance_criterion"
	CodeUnknownAcceptanceCriterion   = "unknown_acceptance_criterion"
	CodeUnknownAction                = "unknown_action"
	CodeUnknownDependency            = "unknown_dependency"
	CodeUnknownEvidenceKind          = "unknown_evidence_kind"
	CodeUnknownField                 = "unknown_field"
	CodeUnknownFlow                  = "unknown_flow"
	CodeUnknownProviderAction        = "unknown_provider_action"
	CodeUnknownSchema                = "unknown_schema"
	CodeUnknownSegment               = "unknown_segment"
	CodeUnknownSession               = "unknown_session"
	CodeUnknownStep                  = "unknown_step"
	CodeUnresolvedBinding            = "unresolved_binding"
	CodeUnsafeArtifactPath           = "unsafe_artifact_path"
	CodeUnsafeBind                   = "unsafe_bind"
	CodeUnsafeCompiledAction         = "unsafe_compiled_action"
	// 4: a device path outside the session's root
	CodeUnsafeDevicePath   = "unsafe_device_path"
	CodeUnsafeEvidencePath = "unsafe_evidence_path"
	CodeUnsupportedAction  = "unsupported_action"
	CodeUnsupportedConfig  = "unsupported_config"
	// 2
	CodeUnsupportedItems = "unsupported_items"
	// CodeUnsupportedMediaType: a state-changing dashboard request that is not
	// application/json, or a browser's /v1/ request with a form's body.
	CodeUnsupportedMediaType   = "unsupported_media_type"
	CodeUnsupportedOracle      = "unsupported_oracle"
	CodeUnsupportedSchema      = "unsupported_schema"
	CodeVisionNotSupported     = "vision_not_supported"
	CodeVisionPlannerFailed    = "vision_planner_failed"
	CodeVisionPreflightMissing = "vision_preflight_missing"
	CodeVisionReviewFailed     = "vision_review_failed"
	CodeVisionScreenshotFailed = "vision_screenshot_failed"
)
