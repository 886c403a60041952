package redistest

import "syscall"

// Pause stops the server with SIGSTOP: it keeps its connections but answers
// nothing (a replica that acknowledges nothing, a master that hangs) until
// [Server.Resume]. Kill (and so the test's Cleanup) ends a paused server too.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a server stopped by [Server.Pause] (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}
