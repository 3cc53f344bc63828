// Package readiness answers "is this device ready, and what is on it":
// doctor, adb-connect, SoloPi configuration, capabilities, apps, app
// information and status, page inspection, screenshots, logs, and app
// start-up time measurement.
package readiness
