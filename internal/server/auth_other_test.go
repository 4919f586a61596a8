//go:build !unix

package server

import "errors"

func mkfifoFile(string) error { return errors.New("no named pipes here") }
