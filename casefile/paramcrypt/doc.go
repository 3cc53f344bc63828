// Package paramcrypt is SoloPi's encryption of case step parameters
// ("encrypt": true): AES/ECB/PKCS5 under a key drawn from Android's
// InsecureSHA1PRNGKeyDerivator, hex-encoded the way the app's Java code
// writes it. It is apart from casefile because it is a cipher with its own
// test vectors, used by the case format, the run evidence and the simulator.
package paramcrypt
