package fleet_test

const childEnv = "FLEET_TEST_CHILD"

func childMain(role string) int { return 2 }
