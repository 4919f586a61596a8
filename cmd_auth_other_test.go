//go:build !unix

package main

import "errors"

func mkfifoFile(string) error { return errors.New("no named pipes here") }
