module pqprof/peers/go

// crypto/mlkem and the X25519MLKEM768 TLS group arrived in Go 1.24.
go 1.24
