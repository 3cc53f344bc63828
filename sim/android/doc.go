// Package android is the simulator's virtual Android phone: installed apps
// (declared as data in package appspec) with their process state, a task
// stack, windows with accessibility trees (snapshots in package ui), input
// events, an IME, PNG screenshots rendered from the trees, logcat, and the
// phone's own shell commands (am, pm, input, dumpsys, logcat ...) run by
// package shell over the file system of package vfs.
//
// The leaves hold what needs no running phone; this package keeps what does:
// the state behind the lock, and the glue that turns it into windows,
// screenshots and command output.
//
// The phone knows nothing about SoloPi's protocol: the SoloPi device side
// (sim/soloapp) reads the UI through Windows / AccessibilityRoots and drives
// it through the input methods, and registers itself for the protected
// scheme activity with RegisterActivityHandler. The adb fronts (sim/adbd)
// call RunShell and the FS.
//
// Every delay and timestamp goes through the simulator clock so tests can run
// the device's timing rules faster than real time. All exported methods of
// Phone are safe for concurrent use.
package android
