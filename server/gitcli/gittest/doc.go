// Package gittest builds real git repositories for tests of the packages
// that drive git. Isolate, called from TestMain, makes every git the test
// process starts ignore the machine's configuration and commit under a
// fixed identity; the other helpers run git and fail the test when it
// fails.
package gittest
