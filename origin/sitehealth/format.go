package sitehealth

import "strconv"

// formatFloat formats v with at most one decimal.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// itoa formats n.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
