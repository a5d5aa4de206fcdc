// Package world runs each end-to-end story that needs a test network in a
// network world of its own (noderunner.World), so that stories run side by
// side on one machine with the same addresses, and mirrors each story's
// subtests, output and outcome into the test that started it.
package world
