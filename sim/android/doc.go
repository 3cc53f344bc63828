// Package android is the simulator's virtual Android phone: installed apps
// declared as data, a task stack, windows with accessibility trees, input
// events, an IME, PNG screenshots rendered from the trees, a virtual file
// system for /sdcard and /data/local/tmp, logcat, and an sh-compatible shell
// (mvdan.cc/sh) that runs the commands a host issues through adb.
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
