// The test programs' precompiled header is built with this file (tests/CMakeLists.txt, gnn_test_pch).
