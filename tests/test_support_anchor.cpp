// Keeps argus_test_support a valid library before support files exist.
