package core

// recordsRootLocked is <solopiDir>/records (canonical).
func (a *App) RecordsRootLocked() string { return a.SolopiDirLocked() + "/records" }
