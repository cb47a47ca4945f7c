// The part of Core Location that MapClusterMapKit and its examples use, as Apple documents it. Core Location is a C and
// Objective-C framework, so its mirror is a C header too: Swift imports these declarations as it imports Apple's, and a
// CLLocationCoordinate2D can be an @objc property's type, as ClusterAnnotation's coordinate is.
#ifndef MAPCLUSTER_MIRROR_CORELOCATION_H
#define MAPCLUSTER_MIRROR_CORELOCATION_H

// https://developer.apple.com/documentation/corelocation/cllocationdegrees
typedef double CLLocationDegrees;

// https://developer.apple.com/documentation/corelocation/cllocationdirection
typedef double CLLocationDirection;

// https://developer.apple.com/documentation/corelocation/cllocationdistance
typedef double CLLocationDistance;

// https://developer.apple.com/documentation/corelocation/cllocationcoordinate2d
// Swift sees init(latitude:longitude:), latitude and longitude.
typedef struct {
    // https://developer.apple.com/documentation/corelocation/cllocationcoordinate2d/latitude
    CLLocationDegrees latitude;
    // https://developer.apple.com/documentation/corelocation/cllocationcoordinate2d/longitude
    CLLocationDegrees longitude;
} CLLocationCoordinate2D;

#endif
