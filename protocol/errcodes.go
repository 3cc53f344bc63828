package protocol

// Device error codes: the errorCode values SoloPi v1.0.2 answers with
// (docs/error-codes.md#device-codes). The host matches on them; the simulator
// emits them.
const (
	ErrActivityStatusUnavailable       = "activity_status_unavailable"
	ErrAdbConnectReceiptNotFound       = "adb_connect_receipt_not_found"
	ErrAdbConnectionBusy               = "adb_connection_busy"
	ErrAdbConnectionFailed             = "adb_connection_failed"
	ErrAdbConnectionScheduleFailed     = "adb_connection_schedule_failed"
	ErrAdbRequired                     = "adb_required"
	ErrAgentInternalError              = "agent_internal_error"
	ErrAlreadyPaused                   = "already_paused"
	ErrAmbiguousManifest               = "ambiguous_manifest"
	ErrAnalysisBusy                    = "analysis_busy"
	ErrAnalysisFailed                  = "analysis_failed"
	ErrAnalysisNotFound                = "analysis_not_found"
	ErrArchiveCompressionLimit         = "archive_compression_limit"
	ErrArchiveEntryLimit               = "archive_entry_limit"
	ErrArchiveEntryTooLarge            = "archive_entry_too_large"
	ErrArchiveExpansionLimit           = "archive_expansion_limit"
	ErrAssetEntryLimit                 = "asset_entry_limit"
	ErrAssetExpansionLimit             = "asset_expansion_limit"
	ErrCaseActive                      = "case_active"
	ErrCaseDeleteFailed                = "case_delete_failed"
	ErrCaseDeleteReceiptNotFound       = "case_delete_receipt_not_found"
	ErrCaseFileNotFound                = "case_file_not_found"
	ErrCaseImportFailed                = "case_import_failed"
	ErrCaseNotFound                    = "case_not_found"
	ErrConfirmationMismatch            = "confirmation_mismatch"
	ErrContentTooLarge                 = "content_too_large"
	ErrCorePluginProtected             = "core_plugin_protected"
	ErrDeleteFailed                    = "delete_failed"
	ErrDuplicateArchiveEntry           = "duplicate_archive_entry"
	ErrDuplicateAssetEntry             = "duplicate_asset_entry"
	ErrDuplicateCase                   = "duplicate_case"
	ErrEmptyArchive                    = "empty_archive"
	ErrEmptyAssetsArchive              = "empty_assets_archive"
	ErrEmptyCaseFile                   = "empty_case_file"
	ErrEmptyPlugin                     = "empty_plugin"
	ErrEmptyStress                     = "empty_stress"
	ErrExecutorUnavailable             = "executor_unavailable"
	ErrExternalScreenRecordConflict    = "external_screen_record_conflict"
	ErrExternalStressConflict          = "external_stress_conflict"
	ErrImportFileNotFound              = "import_file_not_found"
	ErrImportReceiptNotFound           = "import_receipt_not_found"
	ErrInstallFailed                   = "install_failed"
	ErrInstallIoError                  = "install_io_error"
	ErrInternalError                   = "internal_error"
	ErrInvalidAction                   = "invalid_action"
	ErrInvalidArchiveLayout            = "invalid_archive_layout"
	ErrInvalidArchiveSize              = "invalid_archive_size"
	ErrInvalidCase                     = "invalid_case"
	ErrInvalidCaseJSON                 = "invalid_case_json"
	ErrInvalidConfigValue              = "invalid_config_value"
	ErrInvalidCpuCount                 = "invalid_cpu_count"
	ErrInvalidCpuPercent               = "invalid_cpu_percent"
	ErrInvalidCpuStress                = "invalid_cpu_stress"
	ErrInvalidDuration                 = "invalid_duration"
	ErrInvalidFileID                   = "invalid_file_id"
	ErrInvalidFileName                 = "invalid_file_name"
	ErrInvalidID                       = "invalid_id"
	ErrInvalidImportPath               = "invalid_import_path"
	ErrInvalidLimit                    = "invalid_limit"
	ErrInvalidManifest                 = "invalid_manifest"
	ErrInvalidMemory                   = "invalid_memory"
	ErrInvalidMetadata                 = "invalid_metadata"
	ErrInvalidObservation              = "invalid_observation"
	ErrInvalidOwnerToken               = "invalid_owner_token"
	ErrInvalidParameter                = "invalid_parameter"
	ErrInvalidPluginFilter             = "invalid_plugin_filter"
	ErrInvalidPluginID                 = "invalid_plugin_id"
	ErrInvalidPluginName               = "invalid_plugin_name"
	ErrInvalidPluginVersion            = "invalid_plugin_version"
	ErrInvalidRequestID                = "invalid_request_id"
	ErrInvalidScreenRecordConfig       = "invalid_screen_record_config"
	ErrInvalidSessionID                = "invalid_session_id"
	ErrInvalidSHA256                   = "invalid_sha256"
	ErrInvalidStepID                   = "invalid_step_id"
	ErrInvalidStoredCase               = "invalid_stored_case"
	ErrInvalidStressValue              = "invalid_stress_value"
	ErrIoError                         = "io_error"
	ErrLeaseConflict                   = "lease_conflict"
	ErrLoopDetected                    = "loop_detected"
	ErrManifestTooLarge                = "manifest_too_large"
	ErrManualScanActive                = "manual_scan_active"
	ErrMissingAction                   = "missing_action"
	ErrMissingArchiveEntry             = "missing_archive_entry"
	ErrMissingCaseName                 = "missing_case_name"
	ErrMissingID                       = "missing_id"
	ErrMissingImportSelector           = "missing_import_selector"
	ErrMissingManifest                 = "missing_manifest"
	ErrMissingParameter                = "missing_parameter"
	ErrMissingPath                     = "missing_path"
	ErrMissingPayload                  = "missing_payload"
	ErrMissingPluginID                 = "missing_plugin_id"
	ErrMissingRequestID                = "missing_request_id"
	ErrMissingRunID                    = "missing_run_id"
	ErrMissingSessionID                = "missing_session_id"
	ErrMissingSHA256                   = "missing_sha256"
	ErrMissingType                     = "missing_type"
	ErrMissingValue                    = "missing_value"
	ErrMutationBusy                    = "mutation_busy"
	ErrMutationTransportRequired       = "mutation_transport_required"
	ErrNoActiveRun                     = "no_active_run"
	ErrNotPaused                       = "not_paused"
	ErrObservationInterrupted          = "observation_interrupted"
	ErrObservationPermissionRequired   = "observation_permission_required"
	ErrOperationServiceUnavailable     = "operation_service_unavailable"
	ErrOwnerMismatch                   = "owner_mismatch"
	ErrPageExportFailed                = "page_export_failed"
	ErrPagePermissionRequired          = "page_permission_required"
	ErrPageQueryFailed                 = "page_query_failed"
	ErrPageQueryInterrupted            = "page_query_interrupted"
	ErrPageQueryScheduleFailed         = "page_query_schedule_failed"
	ErrPageQueryTimeout                = "page_query_timeout"
	ErrPageRootUnavailable             = "page_root_unavailable"
	ErrPageServiceUnavailable          = "page_service_unavailable"
	ErrPayloadDigestMismatch           = "payload_digest_mismatch"
	ErrPerformanceActive               = "performance_active"
	ErrPluginHasDependents             = "plugin_has_dependents"
	ErrPluginIDentityMismatch          = "plugin_identity_mismatch"
	ErrPluginInUse                     = "plugin_in_use"
	ErrPluginMissing                   = "plugin_missing"
	ErrPluginNotFound                  = "plugin_not_found"
	ErrPluginValidationFailed          = "plugin_validation_failed"
	ErrReceiptNotFound                 = "receipt_not_found"
	ErrRecordNotFound                  = "record_not_found"
	ErrRecordingConflict               = "recording_conflict"
	ErrRecordingManagerUnavailable     = "recording_manager_unavailable"
	ErrRecordingNotActive              = "recording_not_active"
	ErrRemoveFailed                    = "remove_failed"
	ErrReplayActive                    = "replay_active"
	ErrReplayConflict                  = "replay_conflict"
	ErrRequestIDConflict               = "request_id_conflict"
	ErrRunIDMismatch                   = "run_id_mismatch"
	ErrScanActivityBusy                = "scan_activity_busy"
	ErrScanConflict                    = "scan_conflict"
	ErrScanNotActive                   = "scan_not_active"
	ErrScreenCaptureFailed             = "screen_capture_failed"
	ErrScreenCaptureServiceUnavailable = "screen_capture_service_unavailable"
	ErrScreenRecordConflict            = "screen_record_conflict"
	ErrSensitiveConfigUIRequired       = "sensitive_config_ui_required"
	ErrSessionBusy                     = "session_busy"
	ErrSessionConflict                 = "session_conflict"
	ErrSessionExpired                  = "session_expired"
	ErrSessionMismatch                 = "session_mismatch"
	ErrSessionNotFound                 = "session_not_found"
	ErrSessionPaused                   = "session_paused"
	ErrSHA256Mismatch                  = "sha256_mismatch"
	ErrStaleObservation                = "stale_observation"
	ErrStepBudgetExhausted             = "step_budget_exhausted"
	ErrStepStorageFailed               = "step_storage_failed"
	ErrStorageUnavailable              = "storage_unavailable"
	ErrStressConflict                  = "stress_conflict"
	ErrStressNotActive                 = "stress_not_active"
	ErrStressServiceUnavailable        = "stress_service_unavailable"
	ErrTargetAppNotFound               = "target_app_not_found"
	ErrTerminalSession                 = "terminal_session"
	ErrTouchServiceUnavailable         = "touch_service_unavailable"
	ErrUIMigrationRequired             = "ui_migration_required"
	ErrUnsafeArchivePath               = "unsafe_archive_path"
	ErrUnsafeImportFile                = "unsafe_import_file"
	ErrUnsafeRecordLayout              = "unsafe_record_layout"
	ErrUnsafeVideoPath                 = "unsafe_video_path"
	ErrUnsupportedAction               = "unsupported_action"
	ErrUnsupportedAndroidVersion       = "unsupported_android_version"
	ErrUnsupportedConfig               = "unsupported_config"
	ErrUnsupportedMode                 = "unsupported_mode"
	ErrUnsupportedType                 = "unsupported_type"
	ErrURLNotAllowed                   = "url_not_allowed"
	ErrVersionNotNewer                 = "version_not_newer"
)

// DeviceErrorCodes lists every device errorCode, sorted.
func DeviceErrorCodes() []string {
	return []string{
		ErrActivityStatusUnavailable,
		ErrAdbConnectReceiptNotFound,
		ErrAdbConnectionBusy,
		ErrAdbConnectionFailed,
		ErrAdbConnectionScheduleFailed,
		ErrAdbRequired,
		ErrAgentInternalError,
		ErrAlreadyPaused,
		ErrAmbiguousManifest,
		ErrAnalysisBusy,
		ErrAnalysisFailed,
		ErrAnalysisNotFound,
		ErrArchiveCompressionLimit,
		ErrArchiveEntryLimit,
		ErrArchiveEntryTooLarge,
		ErrArchiveExpansionLimit,
		ErrAssetEntryLimit,
		ErrAssetExpansionLimit,
		ErrCaseActive,
		ErrCaseDeleteFailed,
		ErrCaseDeleteReceiptNotFound,
		ErrCaseFileNotFound,
		ErrCaseImportFailed,
		ErrCaseNotFound,
		ErrConfirmationMismatch,
		ErrContentTooLarge,
		ErrCorePluginProtected,
		ErrDeleteFailed,
		ErrDuplicateArchiveEntry,
		ErrDuplicateAssetEntry,
		ErrDuplicateCase,
		ErrEmptyArchive,
		ErrEmptyAssetsArchive,
		ErrEmptyCaseFile,
		ErrEmptyPlugin,
		ErrEmptyStress,
		ErrExecutorUnavailable,
		ErrExternalScreenRecordConflict,
		ErrExternalStressConflict,
		ErrImportFileNotFound,
		ErrImportReceiptNotFound,
		ErrInstallFailed,
		ErrInstallIoError,
		ErrInternalError,
		ErrInvalidAction,
		ErrInvalidArchiveLayout,
		ErrInvalidArchiveSize,
		ErrInvalidCase,
		ErrInvalidCaseJSON,
		ErrInvalidConfigValue,
		ErrInvalidCpuCount,
		ErrInvalidCpuPercent,
		ErrInvalidCpuStress,
		ErrInvalidDuration,
		ErrInvalidFileID,
		ErrInvalidFileName,
		ErrInvalidID,
		ErrInvalidImportPath,
		ErrInvalidLimit,
		ErrInvalidManifest,
		ErrInvalidMemory,
		ErrInvalidMetadata,
		ErrInvalidObservation,
		ErrInvalidOwnerToken,
		ErrInvalidParameter,
		ErrInvalidPluginFilter,
		ErrInvalidPluginID,
		ErrInvalidPluginName,
		ErrInvalidPluginVersion,
		ErrInvalidRequestID,
		ErrInvalidScreenRecordConfig,
		ErrInvalidSessionID,
		ErrInvalidSHA256,
		ErrInvalidStepID,
		ErrInvalidStoredCase,
		ErrInvalidStressValue,
		ErrIoError,
		ErrLeaseConflict,
		ErrLoopDetected,
		ErrManifestTooLarge,
		ErrManualScanActive,
		ErrMissingAction,
		ErrMissingArchiveEntry,
		ErrMissingCaseName,
		ErrMissingID,
		ErrMissingImportSelector,
		ErrMissingManifest,
		ErrMissingParameter,
		ErrMissingPath,
		ErrMissingPayload,
		ErrMissingPluginID,
		ErrMissingRequestID,
		ErrMissingRunID,
		ErrMissingSessionID,
		ErrMissingSHA256,
		ErrMissingType,
		ErrMissingValue,
		ErrMutationBusy,
		ErrMutationTransportRequired,
		ErrNoActiveRun,
		ErrNotPaused,
		ErrObservationInterrupted,
		ErrObservationPermissionRequired,
		ErrOperationServiceUnavailable,
		ErrOwnerMismatch,
		ErrPageExportFailed,
		ErrPagePermissionRequired,
		ErrPageQueryFailed,
		ErrPageQueryInterrupted,
		ErrPageQueryScheduleFailed,
		ErrPageQueryTimeout,
		ErrPageRootUnavailable,
		ErrPageServiceUnavailable,
		ErrPayloadDigestMismatch,
		ErrPerformanceActive,
		ErrPluginHasDependents,
		ErrPluginIDentityMismatch,
		ErrPluginInUse,
		ErrPluginMissing,
		ErrPluginNotFound,
		ErrPluginValidationFailed,
		ErrReceiptNotFound,
		ErrRecordNotFound,
		ErrRecordingConflict,
		ErrRecordingManagerUnavailable,
		ErrRecordingNotActive,
		ErrRemoveFailed,
		ErrReplayActive,
		ErrReplayConflict,
		ErrRequestIDConflict,
		ErrRunIDMismatch,
		ErrScanActivityBusy,
		ErrScanConflict,
		ErrScanNotActive,
		ErrScreenCaptureFailed,
		ErrScreenCaptureServiceUnavailable,
		ErrScreenRecordConflict,
		ErrSensitiveConfigUIRequired,
		ErrSessionBusy,
		ErrSessionConflict,
		ErrSessionExpired,
		ErrSessionMismatch,
		ErrSessionNotFound,
		ErrSessionPaused,
		ErrSHA256Mismatch,
		ErrStaleObservation,
		ErrStepBudgetExhausted,
		ErrStepStorageFailed,
		ErrStorageUnavailable,
		ErrStressConflict,
		ErrStressNotActive,
		ErrStressServiceUnavailable,
		ErrTargetAppNotFound,
		ErrTerminalSession,
		ErrTouchServiceUnavailable,
		ErrUIMigrationRequired,
		ErrUnsafeArchivePath,
		ErrUnsafeImportFile,
		ErrUnsafeRecordLayout,
		ErrUnsafeVideoPath,
		ErrUnsupportedAction,
		ErrUnsupportedAndroidVersion,
		ErrUnsupportedConfig,
		ErrUnsupportedMode,
		ErrUnsupportedType,
		ErrURLNotAllowed,
		ErrVersionNotNewer,
	}
}

// KeepPolling reports whether a receipt query answered with code means the
// receipt is simply not there yet (docs/device-protocol.md#receipt-discipline).
func KeepPolling(code string) bool {
	switch code {
	case ErrImportReceiptNotFound, ErrCaseDeleteReceiptNotFound, ErrAdbConnectReceiptNotFound,
		ErrAnalysisNotFound, ErrReceiptNotFound, ErrSessionNotFound:
		return true
	}
	return false
}
