// Package agent holds herd's knowledge of coding agents: the built-in agent
// profiles and how to tell whether an agent can be started on this machine.
// The Agent Client Protocol runtime that spawns and speaks to agents joins
// this package in a later version.
package agent
