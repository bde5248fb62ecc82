#include <gtest/gtest.h>

#include "model_builder.h"
