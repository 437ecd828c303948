/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `_cleanup_json_ json_object *o = ...;` drops one json-c reference
 * (json_object_put()) when o leaves scope; TAKE_PTR(o) hands it on.  Apart
 * from base/cleanup.h so that only the modules that use json-c include it.
 */
#ifndef GV_BASE_CLEANUP_JSON_H
#define GV_BASE_CLEANUP_JSON_H

#include <json-c/json.h>

#include "cleanup.h"

GV_DEFINE_CLEANUP(json_object *, json_object_put)

#define _cleanup_json_ _cleanup_(json_object_putp)

#endif
