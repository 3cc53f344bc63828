// Package devicecmd holds readiness and device-information commands: doctor,
// adb-connect, config-*, capabilities, apps, app-info, app-status, inspect,
// screenshot, logs and startup-time. Each is an options struct plus a run
// function over cmdutil.DeviceDeps, tested against a scripted device.
package devicecmd
